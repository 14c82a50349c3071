package dev.rdmarpc.grpc;

/**
 * Tells whether an rdmarpc call failed before its HEADERS left this client (or was refused by the
 * server's GOAWAY), so grpc may transparently retry it elsewhere, and with which progress: a call
 * that never left this client is {@code MISCARRIED} (grpc retries it as often as it takes to reach
 * a transport that is not going away, as its OkHttp and Netty transports report streams started on
 * a transport after GOAWAY), one the server refused is {@code REFUSED} (retried once).
 *
 * <p>Stopgap: rdmarpc core reports this only in the status description, so this matches core's
 * wording, which {@code RefusalsTest} pins. It should become a flag on core's call-close callback.
 */
final class Refusals {
    private Refusals() {
    }

    /** How far the call got, as grpc's retry logic needs to know it. */
    static io.grpc.internal.ClientStreamListener.RpcProgress progress(dev.rdmarpc.core.Status status) {
        if (!neverSent(status)) {
            return io.grpc.internal.ClientStreamListener.RpcProgress.PROCESSED;
        }
        return refusedByServer(status.getDescription())
                ? io.grpc.internal.ClientStreamListener.RpcProgress.REFUSED
                : io.grpc.internal.ClientStreamListener.RpcProgress.MISCARRIED;
    }

    static boolean refusedByServer(String d) {
        return (d.startsWith("server ") && d.contains(" is going away: ")) || d.equals("server is shutting down")
                || d.startsWith(STREAM_LIMIT_REFUSAL);
    }

    /**
     * How core's server starts the description of a stream it refused over its concurrent-stream limit (the client
     * ignored the limit the server advertised, or a call raced its last slot): the application never saw it.
     */
    static final String STREAM_LIMIT_REFUSAL = "server refused the stream: ";

    /** True if the call certainly never reached a server application. */
    static boolean neverSent(dev.rdmarpc.core.Status status) {
        if (status.getCode() != dev.rdmarpc.core.Status.Code.UNAVAILABLE || status.getDescription() == null) {
            return false;
        }
        String d = status.getDescription();
        return d.startsWith("cannot connect to ")
                || d.startsWith("cannot resolve ")
                || (d.startsWith("channel to ") && d.endsWith(" is shut down"))
                || (d.startsWith("no connection to ") && d.endsWith(" accepts new calls"))
                || (d.startsWith("server ") && d.contains(" is going away: "))
                // a server that has sent GOAWAY answers a new stream's HEADERS with this, before the
                // application sees it; off the server's I/O thread its TRAILERS can overtake the GOAWAY
                || d.equals("server is shutting down")
                || d.startsWith(STREAM_LIMIT_REFUSAL);
    }
}
