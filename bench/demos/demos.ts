/** How each demo is started on a given port, what proves it is up, and what to load it with. */
export interface DemoSpec {
  name: string;
  /** Arguments that move its server to `port`. */
  portArgs(port: number): string[];
  env?: Record<string, string>;
  /** The first successful request. */
  probe: { method?: string; path: string };
  load: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; body?: string };
}

export const DEMOS: DemoSpec[] = [
  {
    name: 'demo-cache',
    portArgs: (p) => ['--set', `httpserver.api.port=${p}`],
    probe: { path: '/v1/set?value=warm' },
    load: { path: '/v1/get' },
  },
];
