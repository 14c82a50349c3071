package dev.rdmarpc.bench.driver;

/**
 * The netty-raw wire format: frames of {@code [length:int32 big-endian][op:int8][body]}, length
 * counting op and body. ECHO comes back as it went; STREAM ({@code [count:int32][size:int32]})
 * is answered by {@code count} DATA frames of {@code size} bytes and one END frame.
 */
final class RawProtocol {
    static final byte ECHO = 1;
    static final byte STREAM = 2;
    static final byte DATA = 3;
    static final byte END = 4;
    /** Bytes before the body: length and op. */
    static final int HEADER = 5;

    private RawProtocol() {
    }
}
