import type { Metric, Registry } from 'prom-client';

/**
 * A counter and a histogram whose label sets are resolved once, not on every update (issue #17).
 * prom-client's own `inc` and `observe` validate the labels and build a hash of them on every
 * call, and its labelled children hash again: seven such calls cost about 5 µs per request, 2% of
 * a small request. Here a caller asks once for a label set's `cell` and updates its numbers
 * directly; the registry reads the cells at scrape time in the shape prom-client's own metrics
 * give, so the text, the cluster aggregation (`--workers`) and the default metrics beside them
 * are unchanged. Rare series (errors, refusals) keep prom-client's classes.
 */
export type Labels = Readonly<Record<string, string>>;

export interface CounterCell {
  value: number;
}

export interface HistogramCell {
  /** Observations per bucket: counts[i] for values up to bounds[i] (not cumulative), the last for +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Labels;
}

abstract class Series<Cell> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  readonly #cells = new Map<string, { labels: Labels; cell: Cell }>();

  constructor(name: string, help: string, registry: Registry) {
    this.name = name;
    this.help = help;
    // The registry asks only for what this class has (name, get, reset); prom-client types its
    // argument as one of its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The cell of one label set, made on first use; `key` must identify the set. */
  cell(key: string, labels: () => Labels): Cell {
    let entry = this.#cells.get(key);
    if (entry === undefined) this.#cells.set(key, (entry = { labels: labels(), cell: this.newCell() }));
    return entry.cell;
  }

  /** Every cell back to zero, kept: callers hold their cells (prom-client drops its label sets). */
  reset(): void {
    for (const { cell } of this.#cells.values()) this.zero(cell);
  }

  protected abstract newCell(): Cell;
  protected abstract zero(cell: Cell): void;
  protected abstract values(labels: Labels, cell: Cell, splay: boolean): Value[];

  /** What prom-client's own metric gives its registry's text. */
  async getForPromString(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }> {
    return this.#read(false);
  }

  /** What prom-client's own metric gives `getMetricsAsJSON` (the cluster's aggregation reads this). */
  async get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }> {
    return this.#read(true);
  }

  #read(splay: boolean): { name: string; help: string; type: string; values: Value[]; aggregator: string } {
    const values: Value[] = [];
    for (const { labels, cell } of this.#cells.values()) values.push(...this.values(labels, cell, splay));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class SeriesCounter extends Series<CounterCell> {
  readonly type = 'counter';
  protected newCell(): CounterCell {
    return { value: 0 };
  }
  protected zero(cell: CounterCell): void {
    cell.value = 0;
  }
  protected values(labels: Labels, cell: CounterCell): Value[] {
    return [{ labels: { ...labels }, value: cell.value }];
  }
}

export class SeriesHistogram extends Series<HistogramCell> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(name: string, help: string, bounds: readonly number[], registry: Registry) {
    super(name, help, registry);
    this.#bounds = bounds;
  }

  protected newCell(): HistogramCell {
    return { counts: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  protected zero(cell: HistogramCell): void {
    cell.counts.fill(0);
    cell.sum = 0;
    cell.count = 0;
  }

  /** A value that is not a finite number is not counted (prom-client threw). */
  observe(cell: HistogramCell, value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (cell.counts[i] as number)++;
    cell.sum += value;
    cell.count++;
  }

  /** prom-client's order: each bucket (cumulative), +Inf, sum, count; `le` first, then the set's labels. */
  protected values(labels: Labels, cell: HistogramCell, splay: boolean): Value[] {
    const bucket = `${this.name}_bucket`;
    const value = (own: Record<string, string | number>, n: number, metricName: string): Value =>
      splay ? { labels: { ...own, ...labels }, value: n, metricName } : { labels: own, sharedLabels: labels, value: n, metricName };
    const out: Value[] = [];
    let running = 0;
    this.#bounds.forEach((le, i) => {
      running += cell.counts[i] as number;
      out.push(value({ le }, running, bucket));
    });
    out.push(value({ le: '+Inf' }, cell.count, bucket), value({}, cell.sum, `${this.name}_sum`), value({}, cell.count, `${this.name}_count`));
    return out;
  }
}
