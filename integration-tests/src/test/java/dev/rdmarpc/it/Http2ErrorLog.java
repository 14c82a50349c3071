package dev.rdmarpc.it;

import io.netty.handler.codec.http2.Http2Exception;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Records, while it is open, the HTTP/2 errors that are only logged: what Netty logs at WARNING or above (such as the
 * errors its codec catches from its own stream listeners) and the frames the TCP transport wrote that Netty's codec
 * refused with an HTTP/2 error (a WINDOW_UPDATE returning more than the stream received, logged at DEBUG). Netty logs
 * through java.util.logging in these tests (no other logging library is on their class path), as the transport does.
 */
final class Http2ErrorLog implements AutoCloseable {
    private static final SimpleFormatter FORMAT = new SimpleFormatter();
    private final Logger netty = Logger.getLogger("io.netty");
    private final Logger transport = Logger.getLogger("dev.rdmarpc.transport.tcp");
    private final Level transportLevel = transport.getLevel();
    private final List<String> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            boolean nettyError = r.getLoggerName().startsWith("io.netty") && r.getLevel().intValue() >= Level.WARNING.intValue();
            boolean refusedFrame = r.getParameters() != null
                    && Arrays.stream(r.getParameters()).anyMatch(p -> p instanceof Http2Exception);
            if (nettyError || refusedFrame) {
                records.add(r.getLoggerName() + ": " + FORMAT.formatMessage(r) + (r.getThrown() == null ? "" : ": " + r.getThrown()));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    Http2ErrorLog() {
        if (!(InternalLoggerFactory.getDefaultFactory() instanceof JdkLoggerFactory)) {
            throw new IllegalStateException("Netty does not log through java.util.logging here but through "
                    + InternalLoggerFactory.getDefaultFactory());
        }
        handler.setLevel(Level.ALL);
        netty.addHandler(handler);
        transport.addHandler(handler);
        transport.setLevel(Level.FINE);
    }

    /** What was recorded so far. */
    List<String> records() {
        return List.copyOf(records);
    }

    @Override
    public void close() {
        transport.setLevel(transportLevel);
        transport.removeHandler(handler);
        netty.removeHandler(handler);
    }
}
