// /docs: the API reference as one server-rendered HTML page, made from the same OpenAPI document as /openapi.json.

interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
}
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const schemaBlock = (schema: unknown) => `<pre>${escape(JSON.stringify(schema, null, 2))}</pre>`;

function renderOperation(method: string, path: string, op: Operation): string {
  const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
  const params = (op.parameters ?? [])
    .map((p) => `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : ''}</td>` +
      `<td>${escape(p.description ?? '')} <code>${escape(JSON.stringify(p.schema ?? {}))}</code></td></tr>`)
    .join('');
  const body = op.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => `<h4>${escape(status)} ${escape(r.description ?? '')}</h4>` +
      (r.content?.['application/json']?.schema ? schemaBlock(r.content['application/json'].schema) : ''))
    .join('');
  return `<section id="${id}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>` +
    (op.summary ? `<p><strong>${escape(op.summary)}</strong></p>` : '') +
    (op.description ? `<p>${escape(op.description)}</p>` : '') +
    (params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : '') +
    (body ? `<h4>Request body</h4>${schemaBlock(body)}` : '') +
    `<details><summary>Responses</summary>${responses}</details></section>`;
}

export function renderDocsPage(doc: OpenApiDocument): string {
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const index = operations
    .map(({ path, method }) => `<li><a href="#${`${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-')}">` +
      `<span class="m ${method}">${method.toUpperCase()}</span> ${escape(path)}</a></li>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;font-size:12px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
section{border-top:1px solid #ccc;padding:.5rem 0}.m{display:inline-block;min-width:4rem;font-weight:bold}.get{color:#06c}.post{color:#080}.patch,.put{color:#a60}.delete{color:#c00}
ul{columns:2;list-style:none;padding:0}</style></head><body>
<h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>
<p>${escape(doc.info.description ?? '')}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.0.3).</p>
<h2>Operations</h2><ul>${index}</ul>${operations.map(({ method, path, op }) => renderOperation(method, path, op)).join('')}
</body></html>`;
}
