/**
 * Node flags the API process is started with (by `npm start` and the benchmark; set them in
 * NODE_OPTIONS when running `node dist/api/main.js` yourself). A larger young generation means
 * fewer scavenges: each submission allocates its request, body, spec and response objects, and at
 * ~1,000 submissions/s the default 16 MiB semi-space had the API spending ~5% of its CPU in GC.
 */
export const apiNodeFlags = ['--max-semi-space-size=32'];
