import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import type { ProviderConfig } from '../config/types.ts';
import { formatPath } from '../config/yaml-path.ts';
import { PATH_OF, TEXT_ENDPOINTS } from '../formats/wire.ts';
import type { Logger } from '../log.ts';
import {
  PLUGIN_API_VERSION,
  type Endpoint,
  type ProviderConfigError,
  type PluginModule,
  type ProviderPlugin,
  type StandardSchemaV1,
} from './api.ts';
import { BUILTIN_PLUGINS } from './builtins.ts';

/** A provider whose plugin loaded, validated its options and was created. */
export interface LoadedProvider {
  readonly config: ProviderConfig;
  /** The plugin module's `name`. */
  readonly pluginName: string;
  readonly plugin: ProviderPlugin;
}

/** Start-up problems with plugins, each line naming its YAML path. */
export class PluginLoadError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'PluginLoadError';
    this.problems = problems;
  }
}

const ENDPOINTS = Object.keys(PATH_OF) as readonly Endpoint[];

/**
 * Loads every provider's plugin (built-in name, path relative to the YAML file, or npm package),
 * checks it, validates its options and creates it. Collects every problem before failing.
 */
export async function loadProviders(
  providers: readonly ProviderConfig[],
  configDir: string,
  log: Logger,
): Promise<Map<string, LoadedProvider>> {
  const loaded = new Map<string, LoadedProvider>();
  const problems: string[] = [];
  for (const config of providers) {
    try {
      loaded.set(config.id, await loadOne(config, configDir, log));
    } catch (err) {
      problems.push(...(err instanceof PluginLoadError ? err.problems : [`${config.yamlPath}.plugin: ${String(err)}`]));
    }
  }
  if (problems.length > 0) {
    // The ones that did load are released: a refused reload (or start) leaves nothing open.
    await closeProviders(loaded.values(), log);
    throw new PluginLoadError(problems);
  }
  return loaded;
}

/**
 * Calls each provider's close(), logging a failure and going on: through a then(), so a close()
 * that throws at once is caught too, never an unhandled rejection (issue #16 review).
 */
export async function closeProviders(providers: Iterable<LoadedProvider>, log: Logger): Promise<void> {
  for (const provider of providers) {
    await Promise.resolve()
      .then(() => provider.plugin.close?.())
      .catch((err: unknown) => log.warn({ provider: provider.config.id, err: String(err) }, 'a provider plugin failed to close'));
  }
}

async function loadOne(config: ProviderConfig, configDir: string, log: Logger): Promise<LoadedProvider> {
  const at = `${config.yamlPath}.plugin`;
  const fail = (message: string): never => {
    throw new PluginLoadError([`${at}: ${message}`]);
  };
  let exported: unknown;
  try {
    exported = await importPlugin(config.plugin, configDir);
  } catch (err) {
    fail(`cannot load "${config.plugin}": ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  const module = pluginModuleOf(exported);
  if (!module) {
    return fail(`"${config.plugin}" is not a Junction plugin: its default export needs name, apiVersion and create()`);
  }
  if (semver.validRange(module.apiVersion) === null) {
    fail(`plugin "${module.name}" declares an invalid apiVersion range "${module.apiVersion}"`);
  }
  if (!semver.satisfies(PLUGIN_API_VERSION, module.apiVersion)) {
    fail(`plugin "${module.name}" needs plugin API ${module.apiVersion}; this gateway provides ${PLUGIN_API_VERSION}`);
  }
  const options = module.optionsSchema
    ? await validateOptions(module.optionsSchema, config.options, `${config.yamlPath}.options`)
    : config.options;
  const pluginLog = log.child({ provider: config.id });
  let plugin: unknown;
  try {
    plugin = await module.create({
      id: config.id,
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      options,
      log: pluginLog,
      configDir,
    });
  } catch (err) {
    if (isProviderConfigError(err)) throw new PluginLoadError([`${config.yamlPath}.${err.field}: ${err.message}`]);
    fail(`plugin "${module.name}" failed to start: ${err instanceof Error ? err.message : String(err)}`);
  }
  const problem = checkProviderPlugin(plugin);
  if (problem !== null) fail(`plugin "${module.name}" returned an invalid provider: ${problem}`);
  return { config, pluginName: module.name, plugin: plugin as ProviderPlugin };
}

async function importPlugin(spec: string, configDir: string): Promise<unknown> {
  const builtin = BUILTIN_PLUGINS[spec];
  if (builtin) return builtin();
  if (spec.startsWith('./') || spec.startsWith('../') || path.isAbsolute(spec)) {
    return import(pathToFileURL(path.resolve(configDir, spec)).href);
  }
  // A package name resolves from the config file's folder first (a plugin installed beside the
  // deployment's YAML), then from the gateway's own node_modules.
  let resolved: string | undefined;
  try {
    resolved = createRequire(path.join(configDir, 'junction.config.cjs')).resolve(spec);
  } catch {
    resolved = undefined;
  }
  return resolved === undefined ? import(spec) : import(pathToFileURL(resolved).href);
}

function pluginModuleOf(exported: unknown): PluginModule<unknown> | null {
  const candidates = [isRecord(exported) ? exported['default'] : undefined, exported];
  for (const candidate of candidates) {
    if (
      isRecord(candidate) &&
      typeof candidate['name'] === 'string' &&
      typeof candidate['apiVersion'] === 'string' &&
      typeof candidate['create'] === 'function'
    ) {
      return candidate as unknown as PluginModule<unknown>;
    }
  }
  return null;
}

async function validateOptions(schema: StandardSchemaV1, options: unknown, at: string): Promise<unknown> {
  const result = await schema['~standard'].validate(options);
  if (result.issues === undefined) return result.value;
  throw new PluginLoadError(
    result.issues.map((issue) => {
      const keys = (issue.path ?? []).map((p) => (typeof p === 'object' ? p.key : p));
      return `${at}${keys.length > 0 ? `.${formatPath(keys)}` : ''}: ${issue.message}`;
    }),
  );
}

/** Returns null for a valid provider plugin, else what is wrong with it. */
function checkProviderPlugin(value: unknown): string | null {
  if (!isRecord(value)) return 'create() must return an object';
  const { native, translate, invoke } = value;
  const translateFor = value['translateFor'];
  if (native === undefined && translate === undefined && invoke === undefined && translateFor === undefined) {
    return 'it offers none of native, translate, translateFor or invoke';
  }
  if (translateFor !== undefined && typeof translateFor !== 'function') return 'translateFor must be a function';
  if (invoke !== undefined && typeof invoke !== 'function') return 'invoke must be a function';
  const invokes = value['invokes'];
  if (invokes !== undefined) {
    if (!Array.isArray(invokes) || invoke === undefined) return 'invokes must be an array of endpoints, beside invoke';
    for (const endpoint of invokes) {
      if (!ENDPOINTS.includes(endpoint as Endpoint)) return `invokes has an unknown endpoint "${String(endpoint)}"`;
    }
  }
  const parameters = value['parameters'];
  if (parameters !== undefined && !(Array.isArray(parameters) && parameters.every((p) => typeof p === 'string'))) {
    return 'parameters must be an array of strings';
  }
  if (native !== undefined) {
    if (!isRecord(native) || !isRecord(native['endpoints']) || !isRecord(native['headers'])) {
      return 'native needs endpoints and headers objects';
    }
    for (const [endpoint, url] of Object.entries(native['endpoints'])) {
      if (!ENDPOINTS.includes(endpoint as Endpoint)) return `native.endpoints has an unknown endpoint "${endpoint}"`;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return `native.endpoints.${endpoint} must be an http(s) URL`;
    }
    for (const [name, headerValue] of Object.entries(native['headers'])) {
      if (typeof headerValue !== 'string') return `native.headers.${name} must be a string`;
    }
  }
  if (translate !== undefined) {
    const problem = checkTranslator(translate);
    if (problem !== null) return `translate${problem}`;
  }
  return null;
}

const TRANSLATABLE: readonly Endpoint[] = [...TEXT_ENDPOINTS, 'responses'];

/**
 * Returns null for a valid translator, else what is wrong with it, as a path below the
 * translator (`.upstream must be …`). For `translate`, and for what `translateFor` returns
 * (checked once per route at start-up, catalogue.ts).
 */
export function checkTranslator(translate: unknown): string | null {
  if (!isRecord(translate) || !Array.isArray(translate['endpoints'])) return ' needs an endpoints array';
  if (!['chat', 'messages', 'responses', 'custom'].includes(String(translate['upstream']))) {
    return '.upstream must be "chat", "messages", "responses" or "custom"';
  }
  if (translate['upstream'] === 'custom') {
    const format = translate['format'];
    const missing = ['encodeRequest', 'decodeAnswer', 'streamDecoder'].find((name) => !isRecord(format) || typeof format[name] !== 'function');
    if (missing !== undefined) return `.format.${missing} must be a function (a "custom" upstream brings its format's codec)`;
  }
  for (const endpoint of translate['endpoints']) {
    // Only the text endpoints have formats to translate between.
    if (!TRANSLATABLE.includes(endpoint as Endpoint)) return `.endpoints has an unknown endpoint "${String(endpoint)}"`;
  }
  if (typeof translate['request'] !== 'function') return '.request must be a function';
  for (const hook of ['error', 'sign', 'retry', 'inputTokens']) {
    if (translate[hook] !== undefined && typeof translate[hook] !== 'function') return `.${hook} must be a function`;
  }
  return null;
}

/**
 * Recognised by shape, not instanceof: a plugin installed as a package may carry its own copy of
 * the contract module, whose class is a different object.
 */
function isProviderConfigError(err: unknown): err is ProviderConfigError {
  return err instanceof Error && err.name === 'ProviderConfigError' && typeof (err as { field?: unknown }).field === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
