/*
 * The picture of a system: who calls whom, over which protocol, which backing stores, drawn from
 * the same model the manifests are written from. Two texts: Mermaid (GitHub and most wikis draw
 * it) and an SVG from a small writer of our own, deterministic to the byte (fixed sizes, integer
 * coordinates, no fonts measured, no time or randomness), so a test can compare it with the
 * committed file.
 */

export interface GraphNode {
  id: string;
  /** First line: the name; the others: details (entries and ports, the store's kind). */
  lines: string[];
  shape: 'service' | 'store' | 'outside';
}

export interface GraphEdge {
  from: string;
  to: string;
  label: string;
}

export interface ServiceGraph {
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

const mermaidId = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');
const mermaidText = (t: string) => t.replace(/"/g, '#quot;');

/** The graph as a Mermaid flowchart, left to right. */
export function toMermaid(g: ServiceGraph): string {
  const out = ['---', `title: ${g.title}`, '---', 'flowchart LR'];
  for (const n of g.nodes) {
    const text = `"${n.lines.map(mermaidText).join('<br/>')}"`;
    const shape =
      n.shape === 'store' ? `[(${text})]` : n.shape === 'outside' ? `([${text}])` : `[${text}]`;
    out.push(`  ${mermaidId(n.id)}${shape}`);
  }
  for (const e of g.edges)
    out.push(`  ${mermaidId(e.from)} -->|"${mermaidText(e.label)}"| ${mermaidId(e.to)}`);
  return `${out.join('\n')}\n`;
}

const escapeXml = (t: string) =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const BOX_W = 180;
const LINE_H = 16;
const PAD = 10;
const COL_GAP = 150;
const ROW_GAP = 30;
const MARGIN = 20;
const TITLE_H = 30;

/**
 * Columns by the longest path from a node nothing points at (the ingress, then the front, then
 * what it calls, …); within a column, nodes in the order they were given. Edges are straight
 * lines from the right side of one box to the left side of the other, labelled at the middle.
 */
export function toSvg(g: ServiceGraph): string {
  const column = new Map<string, number>(g.nodes.map((n) => [n.id, 0]));
  // Longest path, bounded by the node count (a cycle stops growing there).
  for (let round = 0; round < g.nodes.length; round++) {
    let changed = false;
    for (const e of g.edges) {
      const next = (column.get(e.from) ?? 0) + 1;
      if (next > (column.get(e.to) ?? 0) && next < g.nodes.length) {
        column.set(e.to, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const columns: GraphNode[][] = [];
  for (const n of g.nodes) {
    const c = column.get(n.id) ?? 0;
    columns[c] = [...(columns[c] ?? []), n];
  }
  const height = (n: GraphNode) => n.lines.length * LINE_H + 2 * PAD;
  const colHeights = columns.map((col) =>
    (col ?? []).reduce((sum, n, i) => sum + height(n) + (i > 0 ? ROW_GAP : 0), 0),
  );
  const innerH = Math.max(0, ...colHeights);
  const box = new Map<string, { x: number; y: number; w: number; h: number }>();
  columns.forEach((col, c) => {
    let y = MARGIN + TITLE_H + Math.floor((innerH - (colHeights[c] ?? 0)) / 2);
    for (const n of col ?? []) {
      const h = height(n);
      box.set(n.id, { x: MARGIN + c * (BOX_W + COL_GAP), y, w: BOX_W, h });
      y += h + ROW_GAP;
    }
  });
  const width = MARGIN * 2 + columns.length * BOX_W + Math.max(0, columns.length - 1) * COL_GAP;
  const totalH = MARGIN * 2 + TITLE_H + innerH;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${totalH}" viewBox="0 0 ${width} ${totalH}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(g.title)}</title>`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
    `<rect x="0" y="0" width="${width}" height="${totalH}" fill="#ffffff"/>`,
    `<text x="${MARGIN}" y="${MARGIN + 14}" font-size="14" font-weight="bold" fill="#222">${escapeXml(g.title)}</text>`,
  ];
  for (const e of g.edges) {
    const a = box.get(e.from);
    const b = box.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + a.w;
    const y1 = a.y + Math.floor(a.h / 2);
    const x2 = b.x;
    const y2 = b.y + Math.floor(b.h / 2);
    out.push(
      `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="#444" stroke-width="1.5" marker-end="url(#arrow)"/>`,
    );
    out.push(
      `<text x="${Math.floor((x1 + x2) / 2)}" y="${Math.floor((y1 + y2) / 2) - 4}" text-anchor="middle" fill="#333" stroke="#ffffff" stroke-width="4" paint-order="stroke">${escapeXml(e.label)}</text>`,
    );
  }
  const style = {
    service: { fill: '#e8f0fe', stroke: '#3367d6', rx: 6 },
    store: { fill: '#fef7e0', stroke: '#b06000', rx: 16 },
    outside: { fill: '#f1f3f4', stroke: '#5f6368', rx: 20 },
  } as const;
  for (const n of g.nodes) {
    const b = box.get(n.id);
    if (!b) continue;
    const s = style[n.shape];
    out.push(
      `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="${s.rx}" fill="${s.fill}" stroke="${s.stroke}" stroke-width="1.5"/>`,
    );
    n.lines.forEach((line, i) => {
      const weight = i === 0 ? ' font-weight="bold"' : '';
      out.push(
        `<text x="${b.x + Math.floor(b.w / 2)}" y="${b.y + PAD + (i + 1) * LINE_H - 4}" text-anchor="middle"${weight} fill="#222">${escapeXml(line)}</text>`,
      );
    });
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
