package dev.rdmarpc.transport.tcp;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The addresses a client transport in {@code AUTO} found to be gRPC-over-HTTP/2 servers (they answered its HELLO with
 * HTTP/2 SETTINGS), remembered for {@link #REMEMBER_NANOS} so that its next connections to them start with HTTP/2; then
 * rdmarpc's HELLO is offered again (the server may have moved to rdmarpc). At most {@link #MAX_ADDRESSES}, the oldest
 * forgotten first. Thread-safe.
 */
final class Http2Servers {
    /** How long an address is remembered as an HTTP/2 server: 10 minutes. */
    static final long REMEMBER_NANOS = TimeUnit.MINUTES.toNanos(10);
    static final int MAX_ADDRESSES = 1024;

    private final Map<InetSocketAddress, Long> until = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<InetSocketAddress, Long> eldest) {
            return size() > MAX_ADDRESSES;
        }
    };

    /** Remembers that {@code address} answered as an HTTP/2 server. */
    synchronized void remember(InetSocketAddress address) {
        until.remove(address);
        until.put(address, System.nanoTime() + REMEMBER_NANOS);
    }

    /** Whether {@code address} answered as an HTTP/2 server within the last {@link #REMEMBER_NANOS}. */
    synchronized boolean isHttp2(InetSocketAddress address) {
        Long t = until.get(address);
        if (t == null) {
            return false;
        }
        if (System.nanoTime() - t >= 0) {
            until.remove(address);
            return false;
        }
        return true;
    }
}
