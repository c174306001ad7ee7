// Starts the reference Bluesky servers from @atproto/dev-env on localhost for the test session,
// prints one JSON line with their URLs, and stops them when its standard input closes (the pytest
// fixture holds the pipe: the servers never outlive the tests) or on SIGTERM. Two shapes:
//   start.mjs           a PDS and an in-memory PLC directory (TestNetworkNoAppView): posting alone
//   start.mjs appview   the whole network (TestNetwork): PLC, PDS, the AppView (bsky) that serves
//                       notifications and threads, and what it needs beside (bsync, ozone), on the
//                       PostgreSQL of DB_POSTGRES_URL (schemas named after DB_POSTGRES_SCHEMA) and
//                       the Redis of REDIS_HOST. The AppView follows the PDS in the background; a
//                       POST to the printed `control` URL + /process runs processAll() and answers
//                       once the AppView has caught up with everything the PDS wrote.
// Run with the Node 22 installed beside the modules:
//   TWITTERBOT_PDS_MODULES=<cache>/node_modules <cache>/node 22 start.mjs [appview]
import http from 'node:http'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const modules = process.env.TWITTERBOT_PDS_MODULES
if (!modules) {
  console.error('TWITTERBOT_PDS_MODULES is not set: run tests/pds/install.sh and pass its node_modules')
  process.exit(2)
}
const devEnv = await import(pathToFileURL(path.join(modules, '@atproto/dev-env/dist/index.js')).href)
const appview = process.argv[2] === 'appview'

const network = appview
  ? await devEnv.TestNetwork.create({
      dbPostgresUrl: process.env.DB_POSTGRES_URL,
      dbPostgresSchema: process.env.DB_POSTGRES_SCHEMA || 'twitterbot',
      pds: { hostname: 'localhost' },
    })
  : await devEnv.TestNetworkNoAppView.create({
      pds: { hostname: 'localhost' },
    })

// One request at a time: processAll() run twice at once would race over the same cursors.
let indexing = Promise.resolve()
const control = http.createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/process') {
    response.writeHead(404).end('POST /process indexes what the PDS wrote\n')
    return
  }
  indexing = indexing.then(async () => {
    try {
      await network.processAll()
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('indexed\n')
    } catch (err) {
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`processAll failed: ${err?.stack || err}\n`)
    }
  })
})
if (appview) await new Promise((resolve) => control.listen(0, '127.0.0.1', resolve))

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  try {
    control.close()
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

const urls = { pds: network.pds.url, plc: network.plc.url }
if (appview) {
  urls.bsky = network.bsky.url
  urls.control = `http://127.0.0.1:${control.address().port}`
}
process.stdout.write(JSON.stringify(urls) + '\n')
