import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';

/**
 * Traces (issue #16; operations.md §2), off unless `telemetry.otlp_endpoint` is set: one SERVER
 * span per request, with children for the hold, each upstream attempt (CLIENT, named
 * `{operation} {model}` as the GenAI conventions name inference spans) and the settlement, sent
 * over OTLP/HTTP. A client's W3C `traceparent` is continued, and each attempt's is sent upstream.
 * Spans are made from this provider's tracer directly and parents passed explicitly: no global
 * registration, so several gateways in one process (tests, embedders) keep their own.
 */
export interface TelemetryConfig {
  readonly otlpEndpoint: string;
  readonly serviceName: string;
  readonly sampleRatio: number;
}

const propagator = new W3CTraceContextPropagator();
const getter = {
  keys: (carrier: (name: string) => string): string[] => (carrier('traceparent') ? ['traceparent'] : []),
  get: (carrier: (name: string) => string, key: string): string | undefined => carrier(key) || undefined,
};

export class Tracing {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;

  constructor(config: TelemetryConfig) {
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      // A sampled caller's trace is followed; others at the configured ratio.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${config.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` }), { scheduledDelayMillis: 1000 })],
    });
    this.#tracer = this.#provider.getTracer('junction');
  }

  /** A request's span, continuing the client's `traceparent` when it sent one. */
  startRequest(name: string, header: (name: string) => string): RequestTrace {
    const parent = propagator.extract(ROOT_CONTEXT, header, getter);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
    return new RequestTrace(this.#tracer, span);
  }

  /** Sends what is buffered: at shutdown, and for tests. */
  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

/** One request's spans. */
export class RequestTrace {
  readonly #tracer: Tracer;
  readonly span: Span;
  readonly #context: Context;

  constructor(tracer: Tracer, span: Span) {
    this.#tracer = tracer;
    this.span = span;
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  /** A child span: the hold, an upstream attempt (`client`), the settlement. */
  child(name: string, attributes: Attributes, client = false): Span {
    return this.#tracer.startSpan(name, { kind: client ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes }, this.#context);
  }

  /** The `traceparent` to send upstream for an attempt's span. */
  static traceparentOf(span: Span): string | undefined {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, { set: (c, k, v) => (c[k] = v) });
    return carrier['traceparent'];
  }

  /** Ends the request's span with its status: 5xx is an error, as OpenTelemetry's HTTP rules say for a server. */
  end(status: number, attributes: Attributes): void {
    this.span.setAttributes({ ...attributes, 'http.response.status_code': status });
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/** Ends a child span, marking it failed when it did. */
export function endSpan(span: Span, error?: string, attributes: Attributes = {}): void {
  span.setAttributes(attributes);
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error }).setAttribute('error.type', error);
  span.end();
}
