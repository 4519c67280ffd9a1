import http from 'node:http';
const [port, total, conc] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
let sent = 0,
  done = 0,
  non200 = 0;
await new Promise((resolve) => {
  const one = () => {
    if (sent >= total) return;
    sent++;
    http.get({ host: '127.0.0.1', port, path: '/v1/ok', agent }, (res) => {
      if (res.statusCode !== 200) non200++;
      res.resume();
      res.on('end', () => {
        if (++done === total) resolve();
        else one();
      });
    });
  };
  for (let i = 0; i < conc; i++) one();
});
agent.destroy();
console.log(JSON.stringify({ done, non200 }));
