// Thrown by runEpisode before anything is written, when the episode cannot start as configured.
// Everything that goes wrong after the start is data in the trajectory instead.

export const episodeSetupErrorCodes = ['missing-capability', 'invalid-options'] as const;
export type EpisodeSetupErrorCode = (typeof episodeSetupErrorCodes)[number];

export class EpisodeSetupError extends Error {
  override readonly name = 'EpisodeSetupError';
  readonly code: EpisodeSetupErrorCode;

  constructor(code: EpisodeSetupErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
