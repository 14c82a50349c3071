package dev.rdmarpc.core.protocol;

/** The frame types of the wire protocol (see docs/PROTOCOL.md). */
public final class FrameType {
    public static final int HELLO = 1;
    public static final int HEADERS = 2;
    public static final int MESSAGE = 3;
    public static final int END_STREAM = 4;
    public static final int TRAILERS = 5;
    public static final int CANCEL = 6;
    public static final int WINDOW = 7;
    public static final int PING = 8;
    public static final int GOAWAY = 9;
    /** RDMA only: a rendezvous buffer is ready to be read (addr, len, rkey). */
    public static final int RTS = 10;
    /** RDMA only: the rendezvous buffer has been read and may be released. */
    public static final int FIN = 11;

    private static final String[] NAMES = {
        null, "HELLO", "HEADERS", "MESSAGE", "END_STREAM", "TRAILERS", "CANCEL", "WINDOW", "PING", "GOAWAY", "RTS", "FIN"
    };

    private FrameType() {
    }

    public static boolean isKnown(int type) {
        return type >= HELLO && type <= FIN;
    }

    /** Whether the type belongs to one stream (stream id must be non-zero) rather than to the connection. */
    public static boolean isStreamFrame(int type) {
        return type == HEADERS || type == MESSAGE || type == END_STREAM || type == TRAILERS
                || type == CANCEL || type == RTS || type == FIN;
    }

    public static String name(int type) {
        return isKnown(type) ? NAMES[type] : "UNKNOWN(" + type + ")";
    }
}
