import type http from 'node:http';

/**
 * node:http's options for a POST to a URL, no more of them than it needs. `http.request(url, …)`
 * turns the URL into nine options (urlToHttpOptions: href, hash, search, pathname… which a
 * request never reads), and each request then copies every option twice, one by one into a
 * dictionary (ClientRequest's copy without `signal`, then Agent#addRequest's with the agent's
 * own): 80k instructions of a translated stream's 1,385k (callgrind, issue #17, twenty-ninth
 * session). As urlToHttpOptions does, an IPv6 literal loses its brackets and credentials in the
 * URL become `auth`.
 */
export function requestOptions(url: URL, method: string, agent: http.Agent, headers: http.OutgoingHttpHeaders): http.RequestOptions {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options: http.RequestOptions = { protocol: url.protocol, hostname, port: url.port === '' ? undefined : Number(url.port), path: `${url.pathname}${url.search}`, method, agent, headers };
  if (url.username !== '' || url.password !== '') options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return options;
}
