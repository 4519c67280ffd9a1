import { describe, expect, it } from 'vitest';
import { type ServiceGraph, toMermaid, toSvg } from './graph.js';

const graph: ServiceGraph = {
  title: 'shop <demo> & co',
  nodes: [
    { id: 'ingress', lines: ['ingress controller'], shape: 'outside' },
    { id: 'orders', lines: ['orders', 'grpc[orders] :8080'], shape: 'service' },
    { id: 'inventory', lines: ['inventory', 'grpc[inventory] :8081'], shape: 'service' },
    { id: 'inventory/relationaldb/db', lines: ['db', 'relationaldb'], shape: 'store' },
  ],
  edges: [
    { from: 'ingress', to: 'orders', label: 'public: orders' },
    { from: 'orders', to: 'inventory', label: 'gRPC (grpcclient[inventory])' },
    { from: 'inventory', to: 'inventory/relationaldb/db', label: 'relationaldb' },
  ],
};

describe('the service graph', () => {
  it('Mermaid: a flowchart, a store as a cylinder, labels quoted', () => {
    expect(toMermaid(graph)).toBe(
      [
        '---',
        'title: shop <demo> & co',
        '---',
        'flowchart LR',
        '  ingress(["ingress controller"])',
        '  orders["orders<br/>grpc[orders] :8080"]',
        '  inventory["inventory<br/>grpc[inventory] :8081"]',
        '  inventory_relationaldb_db[("db<br/>relationaldb")]',
        '  ingress -->|"public: orders"| orders',
        '  orders -->|"gRPC (grpcclient[inventory])"| inventory',
        '  inventory -->|"relationaldb"| inventory_relationaldb_db',
        '',
      ].join('\n'),
    );
  });

  it('SVG: the same bytes every time, text escaped, a column per call depth', () => {
    const svg = toSvg(graph);
    expect(toSvg(structuredClone(graph))).toBe(svg);
    expect(svg).toContain('<title>shop &lt;demo&gt; &amp; co</title>');
    expect(svg).not.toMatch(/NaN|undefined/);
    // One box per node, one line per edge; boxes of successive columns further right.
    const rects = [...svg.matchAll(/<rect x="(\d+)" y="(\d+)" width="180"/g)].map((m) =>
      Number(m[1]),
    );
    expect(rects).toEqual([20, 350, 680, 1010]);
    expect([...svg.matchAll(/<line /g)].length).toBe(3);
    // Every edge runs from the right side of its source box to the left side of its target.
    for (const m of svg.matchAll(/<line x1="(\d+)" y1="\d+" x2="(\d+)"/g))
      expect([Number(m[1]) - 180, Number(m[2])].every((x) => rects.includes(x))).toBe(true);
  });
});
