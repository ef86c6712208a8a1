// A scripted OpenAI-compatible model on 127.0.0.1 for the editor tests that go through the
// real server to a model (`livenote.ask`): each `POST …/chat/completions` is recorded and
// answered with the next scripted text (the last one repeats), streamed as the real service
// streams it. The server's own tests script models with server/src/model/testing.rs; this is
// its small counterpart for the Node side (the extension-host test, and tests/e2e/vscode/ask.mjs
// through out/test/fakeModel.js).

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModel {
  /** For `[providers.NAME] base_url` (kind "openai"): ends in /v1. */
  baseUrl: string;
  /** Every request body, parsed. */
  requests: unknown[];
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'fake', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

export function startFakeModel(replies: string[]): Promise<FakeModel> {
  const requests: unknown[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      try {
        requests.push(JSON.parse(body));
      } catch {
        requests.push(body);
      }
      const text = replies[Math.min(next, replies.length - 1)] ?? '';
      next++;
      res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
      res.write(chunk({ role: 'assistant', content: '' }, null));
      for (const word of text.match(/\S+\s*/g) ?? []) {
        res.write(chunk({ content: word }, null));
      }
      res.write(chunk({}, 'stop'));
      res.write(`data: ${JSON.stringify({ id: 'fake', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        requests,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
