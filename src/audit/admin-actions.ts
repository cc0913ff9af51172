import { issueKey, type KeyRequest } from '../auth/issue-key.ts';
import type { Pico } from '../billing/money.ts';
import type { AuditActor, KeyRecord, Store } from '../store/store.ts';

/**
 * The admin writes on keys, each followed by its audit row (issue #16): one path for the admin
 * API, the dashboard and `junction keys`, so no channel can forget the audit. The row is written
 * once the change is committed: a refused action leaves none, and an audit write that fails
 * surfaces as the action's error (the change stays made, and the caller hears of it).
 */
export class AdminActions {
  readonly #store: Store;
  readonly #keyPrefix: string;

  constructor(store: Store, keyPrefix: string) {
    this.#store = store;
    this.#keyPrefix = keyPrefix;
  }

  /** The new key is returned this once; the audit row names it, never shows it. */
  async createKey(request: KeyRequest, by: AuditActor): Promise<{ key: string; record: KeyRecord }> {
    const issued = await issueKey(this.#store, this.#keyPrefix, request);
    await this.#audit(by, 'key.create', issued.record.name, request.balance, creationDetail(request));
    return issued;
  }

  async topUp(name: string, amount: Pico, by: AuditActor): Promise<KeyRecord> {
    const key = await this.#store.topUp(name, amount);
    await this.#audit(by, 'key.topup', key.name, amount, null);
    return key;
  }

  async setDisabled(name: string, disabled: boolean, by: AuditActor): Promise<KeyRecord> {
    const key = await this.#store.setDisabled(name, disabled);
    await this.#audit(by, disabled ? 'key.disable' : 'key.enable', key.name, null, null);
    return key;
  }

  #audit(by: AuditActor, action: string, keyName: string, amount: Pico | null, detail: string | null): Promise<void> {
    return this.#store.recordAudit({ ...by, action, keyName, amount, detail });
  }
}

/** `models=demo,gpt-*; rpm=30`: what a new key may do, beyond its balance (in `amount`). */
function creationDetail(request: KeyRequest): string | null {
  const parts = [
    ...(request.models === null ? [] : [`models=${request.models.join(',')}`]),
    ...(['rpm', 'tpm', 'concurrency'] as const).filter((l) => request.limits[l] !== null).map((l) => `${l}=${request.limits[l]}`),
    ...(request.balance === null ? ['unlimited'] : []),
  ];
  return parts.length === 0 ? null : parts.join('; ');
}
