package dev.rdmarpc.transport.tcp;

import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Stream;

import java.lang.System.Logger.Level;

/**
 * Lets an HTTP/2 client send a message the {@link H2Bridge} has admitted without waiting for credit every half
 * window: the stream's HTTP/2 receive window grows by what core's stream window takes of the message beyond
 * {@link H2Codecs#STREAM_WINDOW}, and is back to that once the message is handed. A stream whose message waits for
 * admission still holds at most {@link H2Codecs#STREAM_WINDOW} in the bridge; an admitted one, while core's window
 * is full, at most core's stream window more. Used on the connection's I/O thread only.
 */
final class H2AdmittedWindows {
    private final Http2Connection connection;

    H2AdmittedWindows(Http2Connection connection) {
        this.connection = connection;
    }

    /**
     * The message of {@code s} (whose body is {@code s.bodyLeft} bytes) was admitted on its prefix: the window grows so
     * that, with the prefix's bytes not yet returned, the client may send the whole body (within core's window).
     */
    void widen(H2Stream s) {
        long extra = Math.min(s.bodyLeft + H2Stream.PREFIX, s.coreWindow) - H2Codecs.STREAM_WINDOW;
        if (extra > 0 && s.widened == 0) {
            s.widened = (int) extra;
            change(s, s.widened);
        }
    }

    /** The admitted message of {@code s} has been handed to core. */
    void narrow(H2Stream s) {
        if (s.widened > 0) {
            int w = s.widened;
            s.widened = 0;
            change(s, -w);
        }
    }

    private void change(H2Stream s, int delta) {
        Http2Stream stream = connection.stream(s.h2.id());
        if (stream == null) {
            return; // closed: its window no longer matters
        }
        try {
            connection.local().flowController().incrementWindowSize(stream, delta);
        } catch (Http2Exception e) {
            TcpFrameConnection.LOG.log(Level.DEBUG, "HTTP/2 window of stream {0} left as it was: {1}", s.h2.id(), e);
        }
    }
}
