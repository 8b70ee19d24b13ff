// Blocking for one reply from the PostgreSQL worker, in order and without loss.
//
// The worker answers request n by posting its reply, storing n in the shared slot and calling
// Atomics.notify. Those are three separate steps, and the worker thread can be descheduled
// between them (a loaded 2-CPU machine does this often). The old wait — "wait while the slot is
// 0, then take one message" — was therefore wrong in two ways:
//  - a stale wake: request n-1's reply was posted and its flag stored, the main thread saw the
//    flag at once ('not-equal'), took the reply and sent request n; only then did the worker
//    reach request n-1's notify, which woke the main thread from request n's wait with 'ok'
//    while reply n did not exist yet. receiveMessageOnPort found nothing and the connection was
//    declared lost ("the PostgreSQL worker stopped without answering").
//  - a late reply (after a timeout) left in the port would be taken as the next request's answer.
// Here the slot holds the sequence number of the last reply posted, every reply carries the
// number of the request it answers, and the wait loops until the reply with this number has
// arrived or the deadline has passed. A wake for any other reason just waits again.
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads'

// What the worker posts: the reply to request `seq`.
export type Numbered<T> = { seq: number; reply: T }

// The next request number: never 0 (the slot's initial value), wraps inside an Int32.
export function nextSeq(seq: number): number {
  return seq >= 0x7fffffff ? 1 : seq + 1
}

export type WaitOutcome<T> = { reply: T } | { timedOut: true; stale: number }

// Blocks until the reply numbered `seq` is taken from `port`, or `limitMs` has passed. Replies to
// earlier requests found on the way are dropped (counted in `stale`): they can only be answers to
// requests that were already given up on.
export function waitForReply<T>(
  port: MessagePort,
  slot: Int32Array,
  seq: number,
  limitMs: number,
): WaitOutcome<T> {
  const deadline = performance.now() + limitMs
  let stale = 0
  for (;;) {
    // Read the slot BEFORE draining the port: a reply posted after the drain has also changed the
    // slot by the time of the wait below, so that wait returns at once instead of sleeping on it.
    const seen = Atomics.load(slot, 0)
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      const numbered = m.message as Numbered<T>
      if (numbered.seq === seq) return { reply: numbered.reply }
      stale++
    }
    const left = deadline - performance.now()
    if (left <= 0) return { timedOut: true, stale }
    Atomics.wait(slot, 0, seen, left)
  }
}

// The worker's side: post, then publish the number, then wake. The order matters only in that
// the number is stored after the post; the waiter copes with a wake at any moment.
export function postReply<T>(port: MessagePort, slot: Int32Array, seq: number, reply: T): void {
  const numbered: Numbered<T> = { seq, reply }
  port.postMessage(numbered)
  Atomics.store(slot, 0, seq)
  Atomics.notify(slot, 0)
}
