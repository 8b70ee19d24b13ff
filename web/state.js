// What the page follows: the session shown, its event stream and the blocks seen so far.
export const state = {
  current: null,
  events: null,
  blocks: new Map(),
  poll: null,
  agent: null,
  unclipped: new Set(),
}
