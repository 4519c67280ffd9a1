import { getChannelzHandlers } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

interface ServerList {
  server: { data: { calls_started: string | number } }[];
}

/** The servers grpc-js's channelz registry knows in this process (what the channelz service would list). */
function channelzServers(): Promise<ServerList['server']> {
  return new Promise((resolve, reject) => {
    const getServers = getChannelzHandlers().GetServers as unknown as (
      call: { request: object },
      cb: (err: Error | null, value?: ServerList) => void,
    ) => void;
    getServers({ request: { start_server_id: 0, max_results: 100 } }, (err, value) =>
      err ? reject(err) : resolve(value!.server),
    );
  });
}

/** Channelz is grpc-js's server's: these run with `server: grpc-js` whatever SVC_GRPC_SERVER says. */
const GRPC_JS = '    server: grpc-js\n';

describe('enableChannelz (server: grpc-js)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('is off by default: the server keeps no channelz data', async () => {
    h = await startLibrary(GRPC_JS);
    expect((await unary(h.client, 'Ping', { text: 'x' })).response).toEqual({ text: 'pong x' });
    expect(await channelzServers()).toEqual([]);
  });

  it('when on, the server counts its calls for the channelz service', async () => {
    h = await startLibrary(`${GRPC_JS}    enableChannelz: true\n`);
    await unary(h.client, 'Ping', { text: 'x' });
    const servers = await channelzServers();
    expect(servers).toHaveLength(1);
    expect(Number(servers[0]!.data.calls_started)).toBeGreaterThanOrEqual(1);
  });

  it('with server: node there is no channelz: enableChannelz leaves nothing in the registry', async () => {
    h = await startLibrary('    server: node\n    enableChannelz: true\n');
    expect((await unary(h.client, 'Ping', { text: 'x' })).response).toEqual({ text: 'pong x' });
    expect(await channelzServers()).toEqual([]);
  });
});
