import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import YAML from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

// The container image and the compose stack (issue #16). The files are checked offline on every
// run; building the image and serving from it needs a container engine, so that part runs only when
// asked (JUNCTION_TEST_CONTAINER=1) and one is there.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');
const DEMO_KEY = 'sk-jct-local-demo-key-change-me';

// --- A Dockerfile, parsed as far as these checks need ---------------------------------------------

interface Instruction {
  readonly keyword: string;
  /** What follows the keyword, continuation lines joined. */
  readonly rest: string;
  readonly line: number;
}
interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    const trimmed = line.trim();
    // Comments (parser directives included) and blank lines, also inside a continued instruction.
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const continued = line.endsWith('\\');
    const part = continued ? line.slice(0, -1) : line;
    pending = pending ? { text: `${pending.text} ${part.trim()}`, line: pending.line } : { text: part.trim(), line: index + 1 };
    if (continued) return;
    const [keyword = ''] = pending.text.split(/\s+/);
    out.push({ keyword: keyword.toUpperCase(), rest: pending.text.slice(keyword.length).trim(), line: pending.line });
    pending = undefined;
  });
  if (pending) throw new Error(`Dockerfile ends inside a continued instruction (line ${pending.line})`);
  return out;
}

function parseDockerfile(text: string): { args: ReadonlyMap<string, string>; stages: Stage[] } {
  const args = new Map<string, string>();
  const stages: { image: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const { rest } = flags(instruction.rest);
      const [image = '', as, name] = rest.split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => args.get(a ?? b ?? '') ?? '');
      stages.push({ image: resolved, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword !== 'ARG') throw new Error(`line ${instruction.line}: only ARG may come before the first FROM`);
      const [name = '', value = ''] = instruction.rest.split('=');
      args.set(name.trim(), value.trim());
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

/** Leading `--name=value` options of an instruction. */
function flags(rest: string): { flags: Map<string, string>; rest: string } {
  const found = new Map<string, string>();
  let remaining = rest;
  for (let match = /^--([\w-]+)(?:=(\S*))?\s*/.exec(remaining); match; match = /^--([\w-]+)(?:=(\S*))?\s*/.exec(remaining)) {
    found.set(match[1] ?? '', match[2] ?? '');
    remaining = remaining.slice(match[0].length);
  }
  return { flags: found, rest: remaining };
}

/** The JSON (exec) form of CMD, ENTRYPOINT, VOLUME…; undefined for the shell form. */
function execForm(rest: string): string[] | undefined {
  if (!rest.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(rest);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) throw new Error(`not a JSON array of strings: ${rest}`);
  return parsed;
}

const all = (stage: Stage, keyword: string): Instruction[] => stage.instructions.filter((i) => i.keyword === keyword);
const last = (stage: Stage, keyword: string): Instruction | undefined => all(stage, keyword).at(-1);

/** ENV's `NAME=value` pairs (values without spaces, as ours are). */
function envOf(stage: Stage): Map<string, string> {
  const env = new Map<string, string>();
  for (const { rest } of all(stage, 'ENV')) {
    for (const match of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env.set(match[1] ?? '', (match[2] ?? '').replace(/^"|"$/g, ''));
  }
  return env;
}

/** COPY's sources and destination, with its options. */
function copies(stage: Stage): { from: string | undefined; sources: string[]; dest: string }[] {
  return all(stage, 'COPY').map(({ rest }) => {
    const parsed = flags(rest);
    const words = execForm(parsed.rest) ?? parsed.rest.split(/\s+/);
    return { from: parsed.flags.get('from'), sources: words.slice(0, -1), dest: words.at(-1) ?? '' };
  });
}

/** The final stage's HEALTHCHECK: its options and its command (exec form). */
function healthcheck(stage: Stage): { flags: Map<string, string>; command: string[] } | undefined {
  const instruction = last(stage, 'HEALTHCHECK');
  if (!instruction) return undefined;
  const parsed = flags(instruction.rest);
  if (!/^CMD\s/.test(parsed.rest)) throw new Error(`HEALTHCHECK without CMD: ${instruction.rest}`);
  const command = execForm(parsed.rest.replace(/^CMD\s+/, ''));
  if (!command) throw new Error('HEALTHCHECK CMD in shell form: slim images may have no shell tools to rely on');
  return { flags: parsed.flags, command };
}

const healthcheckCommand = (): string[] => healthcheck(parseDockerfile(read('Dockerfile')).stages.at(-1) as Stage)?.command ?? [];

// --- .dockerignore, matched as Docker matches it -----------------------------------------------------

/** Whether `.dockerignore` leaves `file` (relative, with /) out of the build context. */
function ignoredBy(patterns: readonly string[]): (file: string) => boolean {
  const rules = patterns
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = path.posix.normalize((negated ? line.slice(1) : line).trim()).replace(/^\/|\/$/g, '');
      const source = pattern
        .split('/')
        .map((segment) => (segment === '**' ? '\u0000' : segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
        .join('/')
        .replace(/\u0000\//g, '(?:.*/)?')
        .replace(/\/\u0000/g, '(?:/.*)?')
        .replace(/\u0000/g, '.*');
      return { negated, regex: new RegExp(`^${source}$`) };
    });
  return (file) => {
    // A pattern matching a folder matches everything in it; the last rule that matches decides.
    const parts = file.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const rule of rules) if (prefixes.some((p) => rule.regex.test(p))) ignored = !rule.negated;
    return ignored;
  };
}

function filesUnder(relative: string): string[] {
  const absolute = path.join(ROOT, relative);
  if (!statSync(absolute).isDirectory()) return [relative];
  return readdirSync(absolute).flatMap((entry) => (entry === 'node_modules' ? [] : filesUnder(path.posix.join(relative, entry))));
}

// --- What the runtime code imports ----------------------------------------------------------------

/** Module specifiers that survive into the running code (not `import type`/`export type`). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      const [first] = node.arguments;
      if (first && ts.isStringLiteralLike(first)) found.push(first.text);
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL') {
      // new URL('./worker.mjs', import.meta.url): a file the code loads by path.
      const [first, second] = node.arguments ?? [];
      if (first && ts.isStringLiteralLike(first) && second && second.getText(source) === 'import.meta.url') found.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function codeFiles(relative: string): string[] {
  return filesUnder(relative).filter((file) => /\.(?:[cm]?ts|[cm]?js)$/.test(file) && !file.endsWith('.d.ts'));
}

const packageName = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

// --- The checks -------------------------------------------------------------------------------------

describe('container image: Dockerfile', () => {
  const { stages } = parseDockerfile(read('Dockerfile'));
  const final = stages.at(-1) as Stage;
  const builds = stages.slice(0, -1);

  it('has a build stage and a runtime stage, both on one pinned Node LTS image', () => {
    expect(stages.length, 'FROM lines').to.be.at.least(2);
    const images = new Set(stages.map((s) => s.image));
    // One image for both: better-sqlite3's addon is compiled for the Node that runs it.
    expect([...images], 'every stage on the same image').to.have.length(1);
    const match = /^node:(\d+)\.(\d+)\.(\d+)-[a-z]+(?:-slim)?$/.exec(stages[0]?.image ?? '');
    expect(match, `a Node image pinned to major.minor.patch, got "${stages[0]?.image}"`).to.not.equal(null);
    const major = Number(match?.[1]);
    // Even majors are the LTS lines; Node 20 is end-of-life.
    expect(major % 2, 'an LTS (even) Node major').to.equal(0);
    expect(major).to.be.at.least(22);
    // The Node 24 that CI runs the suite on (.ci/run) is the one the image ships.
    const ci = /^NODE24_VERSION=(\S+)$/m.exec(read('.ci/run'))?.[1];
    if (major === 24 && ci !== undefined) expect(`${match?.[1]}.${match?.[2]}.${match?.[3]}`, 'the Node 24 of .ci/run').to.equal(ci);
  });

  it('installs the production dependencies, compiling better-sqlite3, in a build stage only', () => {
    const install = builds.find((stage) => all(stage, 'RUN').some((r) => /\bnpm ci\b/.test(r.rest)));
    expect(install, 'a stage before the last that runs `npm ci`').to.not.equal(undefined);
    const stage = install as Stage;
    const ci = all(stage, 'RUN').find((r) => /\bnpm ci\b/.test(r.rest)) as Instruction;
    expect(ci.rest, 'npm ci leaves devDependencies out').to.match(/--omit=dev\b/);
    // node-gyp's toolchain, for better-sqlite3.
    const runs = all(stage, 'RUN').map((r) => r.rest).join('\n');
    for (const tool of ['python3', 'make', 'g\\+\\+']) expect(runs, `${tool} installed in the build stage`).to.match(new RegExp(`apt-get install[^\\n]*\\s${tool}(\\s|$)`));
    // The addon is loaded before the stage ends, so a bad build fails there.
    expect(runs).to.match(/require\('better-sqlite3'\)/);
    // The runtime stage installs nothing from npm and has no compiler: it copies node_modules.
    const finalRuns = all(final, 'RUN').map((r) => r.rest).join('\n');
    expect(finalRuns).to.not.match(/\bnpm (ci|install|i|rebuild)\b/);
    expect(finalRuns).to.not.match(/\b(g\+\+|gcc|make|python3|build-essential)\b/);
    const fromBuild = copies(final).find((c) => c.from !== undefined && c.sources.some((s) => /node_modules\/?$/.test(s)));
    expect(fromBuild, 'COPY --from=<build stage> node_modules').to.not.equal(undefined);
    expect([stage.name, String(stages.indexOf(stage))]).to.include(fromBuild?.from);
  });

  it('copies in everything the runtime code imports, and needs only `dependencies` from npm', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; type?: string; bin: Record<string, string> };
    const copied = copies(final).filter((c) => c.from === undefined).flatMap((c) => c.sources.map((s) => s.replace(/\/$/, '')));
    // package.json says "type": "module": without it bin/junction.js would not load.
    expect(copied).to.include('package.json');
    for (const folder of ['bin', 'src', 'plugins']) expect(copied, `COPY ${folder}`).to.include(folder);
    const missing = new Set<string>();
    const outside = new Set<string>();
    for (const file of ['bin', 'src', 'plugins'].flatMap(codeFiles)) {
      for (const specifier of runtimeImports(path.join(ROOT, file))) {
        if (specifier.startsWith('.')) {
          const target = path.relative(ROOT, path.resolve(path.join(ROOT, path.dirname(file)), specifier)).split(path.sep).join('/');
          if (!copied.some((c) => target === c || target.startsWith(`${c}/`))) outside.add(`${file} → ${specifier}`);
        } else if (!isBuiltin(specifier) && !specifier.startsWith('data:')) {
          if (!(packageName(specifier) in pkg.dependencies)) missing.add(`${packageName(specifier)} (${file})`);
        }
      }
    }
    expect([...missing], 'imported at run time but not in package.json "dependencies" (npm ci --omit=dev leaves it out)').to.deep.equal([]);
    expect([...outside], 'imported from a file the image does not copy').to.deep.equal([]);
    // bin/junction.js runs the TypeScript through tsx: it must be a runtime dependency.
    expect(pkg.dependencies).to.have.property('tsx');
    expect(pkg.type).to.equal('module');
  });

  it('runs as the non-root node user, under tini', () => {
    const user = last(final, 'USER');
    expect(user?.rest, 'USER in the final stage').to.equal('node');
    const entrypoint = execForm(last(final, 'ENTRYPOINT')?.rest ?? '');
    expect(entrypoint, 'ENTRYPOINT in exec form').to.not.equal(undefined);
    expect(entrypoint?.[0], 'tini as PID 1').to.match(/(^|\/)tini$/);
    expect(entrypoint?.slice(1, 4)).to.deep.equal(['--', 'node', '/app/bin/junction.js']);
    expect(all(final, 'RUN').map((r) => r.rest).join('\n'), 'tini installed in the runtime stage').to.match(/apt-get install[^\n]*\stini(\s|$)/);
  });

  it('keeps the SQLite ledger on a volume the node user can write', () => {
    const volumes = all(final, 'VOLUME').flatMap((v) => execForm(v.rest) ?? v.rest.split(/\s+/));
    expect(volumes).to.include('/data');
    const runs = all(final, 'RUN').map((r) => r.rest).join('\n');
    expect(runs, 'the volume folder made and given to node').to.match(/mkdir -p \/data\b.*chown (node|node:node|1000:1000) \/data\b/s);
    // The baked-in config, with the image's environment, puts the ledger on the volume.
    const storage = envOf(final).get('JUNCTION_STORAGE_URL');
    expect(storage, 'ENV JUNCTION_STORAGE_URL').to.match(/^sqlite:\/\/\/data\//);
    const config = loadConfig(path.join(ROOT, 'config/gateway.yaml'), { JUNCTION_STORAGE_URL: storage });
    expect(config.storage.url).to.equal('sqlite:///data/junction.db');
  });

  it('serves the baked-in config on every interface, on the port it exposes, with a /healthz HEALTHCHECK', () => {
    const cmd = execForm(last(final, 'CMD')?.rest ?? '') ?? [];
    expect(cmd[0]).to.equal('serve');
    const configPath = cmd[cmd.indexOf('--config') + 1];
    expect(configPath).to.equal('/etc/junction/gateway.yaml');
    // config/gateway.yaml binds 127.0.0.1: from outside a container that is unreachable.
    expect(cmd[cmd.indexOf('--host') + 1], '--host').to.equal('0.0.0.0');
    expect(copies(final).some((c) => c.from === undefined && c.sources.includes('config/gateway.yaml') && c.dest === configPath), 'COPY config/gateway.yaml to the --config path').to.equal(true);
    const port = loadConfig(path.join(ROOT, 'config/gateway.yaml'), { JUNCTION_STORAGE_URL: 'sqlite://:memory:' }).server.port;
    expect(all(final, 'EXPOSE').flatMap((e) => e.rest.split(/\s+/))).to.include(String(port));
    const check = healthcheck(final);
    expect(check, 'HEALTHCHECK in the final stage').to.not.equal(undefined);
    const probe = check?.command ?? [];
    // Slim images have no curl or wget: Node's own fetch.
    expect(probe[0]).to.equal('node');
    expect(probe.join(' ')).to.include(`http://127.0.0.1:${port}/healthz`);
    expect(probe.join(' ')).to.not.match(/\b(curl|wget)\b/);
    expect([...(check?.flags.keys() ?? [])], 'HEALTHCHECK options').to.include.members(['interval', 'timeout', 'start-period']);
  });

  it('.dockerignore sends the files the Dockerfile copies, and nothing else of note', () => {
    const ignored = ignoredBy(read('.dockerignore').split('\n'));
    const sources = stages.flatMap((stage) => copies(stage).filter((c) => c.from === undefined).flatMap((c) => c.sources.map((s) => s.replace(/\/$/, ''))));
    const sent = [...new Set(sources)].flatMap(filesUnder);
    expect(sent.length).to.be.greaterThan(100);
    expect(sent.filter(ignored), 'copied by the Dockerfile but left out of the context').to.deep.equal([]);
    const kept = ['node_modules/koa/package.json', '.git/HEAD', 'test/cli/cli.test.ts', 'test/fixtures/x.json', 'bench/results-quick.json', 'bench/peers/node_modules/x/index.js',
      'data/junction.db', 'data/junction.db-wal', 'config/junction.db', 'src/ledger.sqlite', 'config/.env', '.env', 'docs/deployment.md', 'coverage/index.html', 'src/debug.log']
      .filter((file) => !ignored(file));
    expect(kept, 'sent to the build context').to.deep.equal([]);
  });
});

describe('compose.yaml', () => {
  const compose = YAML.parse(read('compose.yaml')) as {
    services: Record<string, { image?: string; build?: unknown; command?: string[]; environment?: Record<string, string>; volumes?: string[]; ports?: string[]; healthcheck?: { test?: unknown; disable?: boolean }; depends_on?: Record<string, { condition?: string }>; stop_grace_period?: string }>;
  };
  const services = compose.services;
  const junction = services['junction'] ?? {};
  const configPath = (junction.command ?? [])[(junction.command ?? []).indexOf('--config') + 1];
  /** The environment the gateway sees in the stack: compose's `${VAR:?…}` and `${VAR:-}` read as set. */
  const dummyEnv = { POSTGRES_PASSWORD: 'dummy-password', JUNCTION_KEY: 'sk-jct-compose-test-0123456789' };

  it('runs Junction, PostgreSQL and Redis, each with a healthcheck', () => {
    expect(Object.keys(services)).to.have.members(['junction', 'postgres', 'redis']);
    expect(services['postgres']?.image, 'the official postgres image, a version pinned').to.match(/^postgres:\d+[\w.-]*$/);
    expect(services['redis']?.image, 'the official redis image, a version pinned').to.match(/^redis:\d+[\w.-]*$/);
    for (const [name, service] of Object.entries(services)) {
      expect(service.healthcheck?.test, `${name}: healthcheck`).to.be.an('array').that.is.not.empty;
      expect(service.healthcheck?.disable, `${name}: healthcheck disabled`).to.not.equal(true);
    }
    expect(JSON.stringify(junction.healthcheck?.test)).to.include('/healthz');
  });

  it('starts Junction once PostgreSQL and Redis are healthy, with --workers auto and config/compose.yaml', () => {
    expect(junction.build).to.equal('.');
    expect(junction.depends_on).to.deep.equal({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    const command = junction.command ?? [];
    expect(command[0]).to.equal('serve');
    expect(command[command.indexOf('--workers') + 1]).to.equal('auto');
    expect(junction.volumes, 'config/compose.yaml mounted at the --config path').to.include(`./config/compose.yaml:${configPath}:ro`);
    // The drain (server.shutdown_grace_s) must end before compose's SIGKILL.
    const grace = loadConfig(path.join(ROOT, 'config/compose.yaml'), dummyEnv).server.shutdownGraceMs / 1000;
    expect(Number.parseInt(junction.stop_grace_period ?? '10', 10), 'stop_grace_period (s)').to.be.greaterThan(grace);
  });

  it('config/compose.yaml loads, pointing at the postgres and redis services, with the demo models', () => {
    const config = loadConfig(path.join(ROOT, 'config/compose.yaml'), dummyEnv);
    const storage = new URL(config.storage.url);
    expect(storage.protocol).to.equal('postgres:');
    expect(storage.hostname).to.equal('postgres');
    expect(storage.password).to.equal('dummy-password');
    const postgres = services['postgres']?.environment ?? {};
    expect(`${storage.username}/${storage.pathname.slice(1)}`, 'POSTGRES_USER/POSTGRES_DB').to.equal(`${postgres['POSTGRES_USER']}/${postgres['POSTGRES_DB']}`);
    expect(new URL(config.redis?.url ?? 'redis://none').hostname).to.equal('redis');
    expect(config.server.host).to.equal('0.0.0.0');
    expect(junction.ports?.some((p) => p.endsWith(`:${config.server.port}`)), 'a port published to server.port').to.equal(true);
    const demo = config.models.find((m) => m.id === 'demo');
    expect(demo?.routes.map((r) => config.providers.find((p) => p.id === r.provider)?.plugin)).to.deep.equal(['mock']);
    expect(config.models.map((m) => m.id)).to.include.members(['demo', 'demo-embed', 'demo-image', 'demo-speech', 'demo-transcribe']);
    expect(config.auth.keys.map((k) => k.name)).to.deep.equal(['local']);
  });

  it('config/compose.yaml takes its secrets from variables compose passes, and has no default key', () => {
    const text = read('config/compose.yaml');
    const referenced = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)];
    const passed = Object.keys(junction.environment ?? {});
    expect(referenced.map((m) => m[1]).filter((name) => !passed.includes(name ?? '')), 'used by config/compose.yaml but not in the junction service environment').to.deep.equal([]);
    // Without them it refuses to start, naming each: a gateway on every interface gets no published key.
    let problems: readonly string[] = [];
    try {
      loadConfig(path.join(ROOT, 'config/compose.yaml'), {});
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems;
    }
    expect(problems.join('\n')).to.include('POSTGRES_PASSWORD').and.to.include('JUNCTION_KEY');
    expect(junction.environment?.['JUNCTION_KEY']).to.match(/^\$\{JUNCTION_KEY:\?/);
    expect(junction.environment?.['POSTGRES_PASSWORD']).to.equal(services['postgres']?.environment?.['POSTGRES_PASSWORD']);
  });
});

// --- Building and running the image: only with a container engine, when asked ----------------------

/** The engine to use: JUNCTION_TEST_CONTAINER=1 (docker, else podman), or =docker / =podman. */
function containerEngine(): { engine: string } | { skipped: string } {
  const wanted = process.env['JUNCTION_TEST_CONTAINER'] ?? '';
  const how = 'set JUNCTION_TEST_CONTAINER=1 (or =docker, =podman) with a container engine whose `docker info` (or `podman info`) exits 0 to run it';
  if (!['1', 'docker', 'podman'].includes(wanted)) return { skipped: how };
  const candidates = wanted === '1' ? ['docker', 'podman'] : [wanted];
  for (const engine of candidates) {
    const info = spawnSync(engine, ['info'], { stdio: 'ignore', timeout: 30_000 });
    if (info.status === 0) return { engine };
  }
  return { skipped: `JUNCTION_TEST_CONTAINER=${wanted} is set, but \`${candidates.map((c) => `${c} info`).join('` and `')}\` did not exit 0 (no daemon, or not installed); ${how}` };
}

function run(command: string, args: readonly string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(command: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const result = await run(command, args, timeoutMs);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${(result.stdout + result.stderr).slice(-4000)}`);
  return result.stdout.trim();
}

describe('container image: build and serve', function () {
  this.timeout(20 * 60_000);
  const IMAGE = 'junction:test';
  let engine = '';
  let container = '';

  before(function () {
    const found = containerEngine();
    if ('skipped' in found) {
      console.log(`  skipped: the container image build and smoke test: ${found.skipped}`);
      this.skip();
    }
    engine = found.engine;
  });
  after(async () => {
    if (container) await run(engine, ['rm', '-f', '-v', container], 60_000);
    if (engine) await run(engine, ['rmi', IMAGE], 60_000);
  });

  it('builds, serves /healthz and the demo model as a non-root user, and stops cleanly on SIGTERM', async () => {
    // podman keeps HEALTHCHECK only in the Docker image format.
    await ok(engine, ['build', ...(engine === 'podman' ? ['--format', 'docker'] : []), '-t', IMAGE, '.'], 15 * 60_000);
    container = await ok(engine, ['run', '-d', '-p', '127.0.0.1::8080', IMAGE]);
    const published = (await ok(engine, ['port', container, '8080/tcp'])).split('\n').find((l) => l.startsWith('127.0.0.1:'));
    expect(published, 'the published port').to.not.equal(undefined);
    const url = `http://${published}`;

    const deadline = Date.now() + 90_000;
    let health: Response | undefined;
    while (Date.now() < deadline) {
      health = await fetch(`${url}/healthz`).catch(() => undefined);
      if (health?.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(health?.status, `GET /healthz (logs: ${await run(engine, ['logs', container], 30_000).then((r) => r.stdout + r.stderr)})`).to.equal(200);

    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hello from the container test' }] }),
    });
    expect(answer.status).to.equal(200);
    const body = (await answer.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).to.include('hello from the container test');

    // Run as uid 1000 (node), the ledger on the volume, the HEALTHCHECK's own command passing.
    expect(await ok(engine, ['exec', container, 'node', '-e', 'process.stdout.write(String(process.getuid()))'])).to.equal('1000');
    await ok(engine, ['exec', container, 'node', '-e', "require('fs').accessSync('/data/junction.db', require('fs').constants.W_OK)"]);
    await ok(engine, ['exec', container, ...healthcheckCommand()]);

    // tini hands SIGTERM to Junction, which drains and exits 0.
    await ok(engine, ['stop', '-t', '40', container], 90_000);
    expect(await ok(engine, ['inspect', '--format', '{{.State.ExitCode}}', container])).to.equal('0');
    const logs = await run(engine, ['logs', container], 30_000);
    expect(logs.stdout + logs.stderr).to.include('junction: stopped');
  });
});
