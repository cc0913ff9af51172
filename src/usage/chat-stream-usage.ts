/**
 * `stream_options.include_usage` on a Chat Completions request (protocol.md §B.6). Toward a Chat
 * upstream the gateway always asks for usage, so the ledger has real counts; whether the client
 * asked decides whether it sees the usage chunk (issue #4). One reading, for every route kind.
 */
type Body = Readonly<Record<string, unknown>> | undefined;

const optionsOf = (body: Body): Record<string, unknown> => {
  const options = body?.['stream_options'];
  return typeof options === 'object' && options !== null ? (options as Record<string, unknown>) : {};
};

/** Whether the client asked to see usage on its stream. */
export function asksForUsage(body: Body): boolean {
  return optionsOf(body)['include_usage'] === true;
}

/** The request's `stream_options` with usage switched on, the client's other options kept. */
export function withUsageRequested(body: Body): Record<string, unknown> {
  return { ...optionsOf(body), include_usage: true };
}
