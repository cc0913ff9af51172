import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * The gateway's logger. Request lines carry ids, names, counts and timings only: never a key, a
 * header value or prompt text (reliability.md §4.3, §4.7). The redact paths are a second line of
 * defence for anything that slips through.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['apiKey', 'api_key', '*.apiKey', '*.api_key', 'headers.authorization', 'headers["x-api-key"]'],
      censor: '[redacted]',
    },
  };
  // Asynchronous writes keep logging off the request path (issue #6); flushed on shutdown.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
