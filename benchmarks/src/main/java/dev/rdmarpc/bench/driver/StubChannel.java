package dev.rdmarpc.bench.driver;

import java.util.function.Supplier;

/**
 * One channel of a generated API, seen the same way for both APIs.
 *
 * @param calls      its async stub's calls
 * @param negotiated the transport it really uses
 * @param close      closes it: no new calls, those in flight get a few seconds to finish
 * @param abort      closes it now, failing the calls in flight
 */
record StubChannel(StubCalls calls, Supplier<String> negotiated, Runnable close, Runnable abort) {
}
