// What the loop reports while it runs, for logs and (in phase 2) server-sent events. Observers
// cannot change the episode; an observer that throws is ignored.
import type { TurnInput } from '../../protocol/turn.ts';
import type { EndStatus } from '../../protocol/finish.ts';
import type { ToolErrorCode } from '../../protocol/tool-error-code.ts';

export type EpisodeEvent =
  | {
      readonly type: 'episode-start';
      readonly trajectoryId: string;
      readonly environment: string;
      readonly taskId: string;
    }
  | { readonly type: 'turn-end'; readonly trajectoryId: string; readonly turn: TurnInput }
  | {
      readonly type: 'tool-error';
      readonly trajectoryId: string;
      readonly index: number;
      readonly toolName: string;
      readonly code: ToolErrorCode;
      readonly message: string;
    }
  | {
      readonly type: 'policy-retry';
      readonly trajectoryId: string;
      readonly retry: number;
      readonly delayMs: number;
      readonly message: string;
    }
  | {
      readonly type: 'episode-end';
      readonly trajectoryId: string;
      readonly status: EndStatus;
      readonly reward?: number;
      readonly detail?: string;
      readonly errorReason?: string;
      readonly turns: number;
    };

export type EpisodeEventType = EpisodeEvent['type'];
