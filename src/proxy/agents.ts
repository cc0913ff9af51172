import http from 'node:http';
import https from 'node:https';

/**
 * The keep-alive connection pools every upstream call shares, native and translated. Node's
 * default for http-proxy-3 is a new connection per request, 2.3x slower here
 * (engineering-notes.md); undici's fetch cost a translated stream more than all its conversion.
 */
export class UpstreamAgents {
  readonly http = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
  readonly https = new https.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });

  for(url: URL): http.Agent {
    return url.protocol === 'https:' ? this.https : this.http;
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
