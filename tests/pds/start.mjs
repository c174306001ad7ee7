// Starts the reference PDS and an in-memory PLC directory (@atproto/dev-env's
// TestNetworkNoAppView) on 127.0.0.1 for the test session, prints one JSON line with their URLs,
// and stops them when its standard input closes (the pytest fixture holds the pipe: the servers
// never outlive the tests) or on SIGTERM. Run with the Node 22 installed beside the modules:
//   TWITTERBOT_PDS_MODULES=<cache>/node_modules <cache>/node 22 start.mjs
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const modules = process.env.TWITTERBOT_PDS_MODULES
if (!modules) {
  console.error('TWITTERBOT_PDS_MODULES is not set: run tests/pds/install.sh and pass its node_modules')
  process.exit(2)
}
const devEnv = await import(pathToFileURL(path.join(modules, '@atproto/dev-env/dist/index.js')).href)

const network = await devEnv.TestNetworkNoAppView.create({
  pds: { hostname: 'localhost' },
})

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  try {
    await network.close()
  } finally {
    process.exit(0)
  }
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.on('close', stop)
process.stdin.resume()

process.stdout.write(JSON.stringify({ pds: network.pds.url, plc: network.plc.url }) + '\n')
