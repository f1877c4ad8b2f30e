// How long edgerl's Node HTTP servers (the edge, serve-model) keep an idle connection open. Node's default
// (5 s) closes it from a timer, and timers run before pending socket reads when the event loop resumes:
// after a step that blocked the loop for longer (a training or prefill step on a busy CPU, or the demo,
// where client and servers share one process), a client that reuses the connection gets ECONNRESET
// ("fetch failed"). Measured with Node 20's fetch against a local server, one 6 s block between two
// requests, 5 tries: 2 resets with Node's 5 s, none with this value. 600 s is undici's own
// keepAliveMaxTimeout default, so neither side holds an idle socket longer than the other expects.
export const serverKeepAliveMs = 600_000;
