/**
 * Junction's public entry: embed a gateway, or write a plugin against the contract.
 * Third-party plugins import only from here (or from ./plugin-host/api.ts).
 */
export { createGateway, type Gateway, type GatewayOptions } from './gateway.ts';
export { loadConfig, parseConfig, ConfigError } from './config/load.ts';
export type { GatewayConfig } from './config/types.ts';
export * from './plugin-host/api.ts';
export type { TokenUsage } from './formats/wire.ts';
export type { RequestRecord, UsageSink } from './usage/sink.ts';
