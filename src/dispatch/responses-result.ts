import { ERR } from '../errors.ts';
import type { Json } from '../formats/convert/json.ts';
import { ToolNames } from '../formats/convert/tool-names.ts';
import { decodeChatAnswer } from '../formats/canonical/chat-answer.ts';
import { decodeMessagesAnswer } from '../formats/canonical/messages-answer.ts';
import { encodeResponsesAnswer } from '../formats/canonical/responses-answer.ts';
import { responsesEventsOf } from '../formats/canonical/responses-events.ts';
import type { GatewayContext } from '../http/state.ts';
import type { FormattedBody, FormattedStream } from '../plugin-host/api.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { SSE_HEADERS, streamErrorFrame } from '../sse/encode.ts';
import { emptyUsage } from '../usage/normalize.ts';

/**
 * An in-process plugin's text answer to a Responses client (issue #14): its Chat or Messages
 * answer decoded to the canonical form and encoded as a Responses `response`, or, for `stream:
 * true`, as the whole event sequence of that response. The response is not stored: an in-process
 * plugin keeps no state, so a later `previous_response_id` naming it is a 404, not an answer
 * without its conversation. Plugins' own streams reach Responses clients with the stream
 * converters, still to come; until then a plugin answers them whole.
 */
export function sendResponsesAnswer(ctx: GatewayContext, result: FormattedBody | FormattedStream, provider: string, attempt: Attempt): AttemptResult {
  const { body, requestId, outcome } = ctx.state;
  if (!body) throw ERR.internal();
  if (!('body' in result)) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, 'a stream of Chat or Messages events cannot answer /v1/responses yet; answer it whole')));
  }
  const answer = result.format === 'chat' ? decodeChatAnswer(result.body as unknown as Json, new ToolNames()) : decodeMessagesAnswer(result.body as unknown as Json);
  // Not stored (see above): said so in the answer, so a client does not send its items back by reference.
  const response = encodeResponsesAnswer(answer, { id: `resp_${requestId.replace(/^req_/, '')}`, createdAt: Math.floor(Date.now() / 1000), request: { ...body, store: false } });
  attempt.commit();
  // Charged from the canonical counts, which keep cache writes apart (Responses' usage may not).
  outcome.usage = { ...emptyUsage(), ...answer.usage };
  outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  const streamed = body['stream'] === true;
  if (ctx.res.headersSent) {
    // Keepalives already began the stream: the rest goes on it.
    ctx.respond = false;
    ctx.res.end(streamed ? responsesEventsOf(response) : streamErrorFrame(ctx.state.surface, ERR.pluginInvalidResult(provider, 'a whole answer after a stream began'), requestId));
    return SERVED;
  }
  if (!streamed) {
    ctx.body = response;
    return SERVED;
  }
  ctx.set(SSE_HEADERS);
  ctx.body = responsesEventsOf(response);
  return SERVED;
}
