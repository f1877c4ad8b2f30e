// How raw SQL results turn Postgres text into JS values, the same on every driver: JSON-friendly and
// free of the local time zone. Dates and times stay Postgres's own text (node-postgres would turn a
// `date` into local midnight), `bigint` becomes a number when it is exact, `bytea` stays `\x…` text.
// The drivers' defaults hold for everything else (int4, float8, bool, json/jsonb, arrays of those).

/** Postgres type OIDs (pg_type.oid), from the server's catalog; stable across versions. */
const oids = {
  bytea: 17,
  int8: 20,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  timetz: 1266,
  dateArray: 1182,
  timestampArray: 1115,
  timestamptzArray: 1185,
  intervalArray: 1187,
} as const;

export type TextParser = (text: string) => unknown;

function asText(text: string): string {
  return text;
}

function int8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

export const sqlValueParsers: Readonly<Record<number, TextParser>> = {
  [oids.bytea]: asText,
  [oids.int8]: int8,
  [oids.date]: asText,
  [oids.time]: asText,
  [oids.timestamp]: asText,
  [oids.timestamptz]: asText,
  [oids.interval]: asText,
  [oids.timetz]: asText,
  [oids.dateArray]: asText,
  [oids.timestampArray]: asText,
  [oids.timestamptzArray]: asText,
  [oids.intervalArray]: asText,
};
