/**
 * The variables a sandboxed command gets so its traffic goes through svc's egress proxy: curl,
 * wget, git (https), npm, pip, Python's and Go's HTTP clients read them; Node's fetch does from
 * Node 24 with NODE_USE_ENV_PROXY. ALL_PROXY (socks5h: names resolved by the proxy) serves curl
 * and other SOCKS-aware clients. NO_PROXY is empty, so nothing is sent around the proxy.
 */
export function proxyEnv(http: string, socks: string): Record<string, string> {
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    npm_config_proxy: http,
    npm_config_https_proxy: http,
    NODE_USE_ENV_PROXY: '1',
    NO_PROXY: '',
    no_proxy: '',
  };
}
