import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.ts';
import { KeyNotFoundError } from '../store/store.ts';
import { KeyRequestError } from '../auth/issue-key.ts';
import { RedisUnreachableError } from '../store/redis-connection.ts';
import { loadProviders, PluginLoadError } from '../plugin-host/loader.ts';
import { createLogger } from '../log.ts';
import { UsageError } from './usage-error.ts';
import { youngGenerationFlags } from '../util/gc-settings.ts';
import { PROCESS_OUTPUT, type CliOutput } from './output.ts';
import { isWorker, runPrimary, workerCount } from './workers.ts';
import { reloadEveryWorker, reloadOnSignals } from './reload-signals.ts';

const USAGE = `usage:
  junction serve --config <file> [--host <host>] [--port <port>] [--workers <n>|auto]
  junction check-config <file>
  junction keys create --config <file> --name <name> [--balance-usd <usd>] [--models <glob,glob>] [--rpm <n>] [--tpm <n>] [--concurrency <n>]
  junction keys list --config <file>
  junction keys topup --config <file> --name <name> --usd <usd>
  junction keys disable --config <file> --name <name>
  junction keys enable --config <file> --name <name>`;

/**
 * Runs the command line; resolves to an exit code, or null while a server keeps running. `io` is
 * where commands other than `serve` write (tests run them in-process).
 */
export async function main(argv: readonly string[], io: CliOutput = PROCESS_OUTPUT): Promise<number | null> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve(rest);
      case 'check-config':
        return await checkConfig(rest, io);
      case 'keys':
        // Loaded on use: each command imports only what it runs, so `keys` starts quickly.
        return await (await import('./keys.ts')).keysCommand(rest, io);
      case '--help':
      case '-h':
      case 'help':
        io.out(`${USAGE}\n`);
        return 0;
      default:
        io.err(`junction: ${command === undefined ? 'no command given' : `unknown command "${command}"`}\n${USAGE}\n`);
        return 2;
    }
  } catch (err) {
    return reportFailure(err, io);
  }
}

async function serve(args: readonly string[]): Promise<number | null> {
  const { values } = parseArgs({
    args: [...args],
    options: { config: { type: 'string', short: 'c' }, host: { type: 'string' }, port: { type: 'string' }, workers: { type: 'string' } },
  });
  if (values.config === undefined) throw new UsageError('serve needs --config <file>');
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  const workers = values.workers === undefined ? undefined : workerCount(values.workers);
  const config = loadConfig(values.config);
  // The primary of `--workers` only forks and supervises; each worker runs the rest of this function.
  if (workers !== undefined && !isWorker()) return runPrimary(workers, config, values.config);
  const { createGateway } = await import('../gateway.ts');
  const gateway = await createGateway(config, isWorker() ? { reload: reloadEveryWorker } : {});
  const address = await gateway.listen(values.host ?? config.server.host, port ?? config.server.port).catch(async (err: unknown) => {
    // Nothing was served: the store, plugins and threads are let go before the error is reported,
    // so the process ends on its own rather than when the last of them does.
    await gateway.close();
    throw err;
  });
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const lines = [
    isWorker()
      ? `junction worker ${process.pid} serving http://${host}:${address.port}`
      : `junction listening on http://${host}:${address.port} (${config.models.length} models, ${config.providers.length} providers, ${values.config})`,
  ];
  // A worker's primary gave it the flag; a single process can only say so (issue #17).
  const young = isWorker() ? [] : youngGenerationFlags();
  if (young.length > 0) {
    lines.push(`  node ${process.version} keeps its young generation smaller than Node 24 would here: start it with ${young.join(' ')} for fewer young collections (docs/deployment.md)`);
  }
  for (const provider of config.providers) {
    if (provider.missingKeyVariables !== null) {
      const vars = provider.missingKeyVariables.join(' or ') || `${provider.yamlPath}.api_key`;
      lines.push(`  provider "${provider.id}" has no API key: set ${vars}; its models answer 503 until then`);
    }
  }
  process.stderr.write(`${lines.join('\n')}\n`);
  // SIGHUP (and the supervisor, and a changed file with server.watch_config) reload the file (issue #16).
  reloadOnSignals(() => gateway.reload(), values.config, config.server.watchConfig);
  // Graceful: stop accepting, let requests and streams finish within server.shutdown_grace_s,
  // end the rest with an in-band error, settle the ledger, exit 0 (issue #5). A second signal
  // does not cut the drain short: the grace is the operator's promise to clients.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.stderr.write(`junction: ${signal} received, still draining\n`);
      return;
    }
    stopping = true;
    // The grace in force now: a reload may have changed it.
    const grace = gateway.config.server.shutdownGraceMs;
    process.stderr.write(`junction: ${signal} received, draining (up to ${grace / 1000} s)\n`);
    void gateway.close(grace).then(
      () => {
        process.stderr.write('junction: stopped\n');
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`junction: shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  // on, not once: a second signal must meet this handler, not Node's default (which kills).
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return null;
}

async function checkConfig(args: readonly string[], io: CliOutput): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError('check-config needs exactly one <file>');
  const config = loadConfig(file);
  // Load and create every plugin too (no network, no files), so a bad plugin is caught here.
  const providers = await loadProviders(config.providers, config.dir, createLogger('silent'));
  for (const provider of providers.values()) await provider.plugin.close?.();
  io.out(`${file}: ok (${config.providers.length} providers, ${config.models.length} models, ${config.auth.keys.length} keys)\n`);
  return 0;
}


function reportFailure(err: unknown, io: CliOutput): number {
  if (err instanceof ConfigError) {
    io.err(`${err.message}\n`);
    return 1;
  }
  if (err instanceof PluginLoadError) {
    io.err(`${err.problems.join('\n')}\n`);
    return 1;
  }
  if (err instanceof KeyNotFoundError || err instanceof RangeError || err instanceof KeyRequestError || err instanceof RedisUnreachableError) {
    io.err(`junction: ${err.message}\n`);
    return 1;
  }
  if (err instanceof UsageError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
    io.err(`junction: ${err.message}\n${USAGE}\n`);
    return 2;
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    io.err(`junction: cannot listen: ${(err as Error).message}\n`);
    return 1;
  }
  io.err(`junction: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}
