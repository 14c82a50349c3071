package dev.rdmarpc.bench.driver;

import com.google.protobuf.ByteString;

import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;

/** Payloads of a given size, made once and shared: random bytes (so nothing compresses them). */
public final class Payloads {
    private static final ConcurrentHashMap<Integer, ByteString> CACHE = new ConcurrentHashMap<>();

    private Payloads() {
    }

    /** The shared payload of this many bytes. */
    public static ByteString of(int size) {
        return CACHE.computeIfAbsent(size, Payloads::random);
    }

    /** The shared payload's bytes, as a new array. */
    public static byte[] bytes(int size) {
        return of(size).toByteArray();
    }

    /** Most messages one server-stream call may ask for. */
    public static final int MAX_STREAM_LENGTH = 1_000_000;

    /** Why a server-stream request is refused, or null when it is fine. */
    public static String checkStreamRequest(int size, int count, int maxMessage) {
        if (size < 0 || size > maxMessage - 16) {
            return "response_size " + size + " outside [0, " + (maxMessage - 16) + "] (the server's max message size minus framing)";
        }
        if (count < 0 || count > MAX_STREAM_LENGTH) {
            return "response_count " + count + " outside [0, " + MAX_STREAM_LENGTH + "]";
        }
        return null;
    }

    private static ByteString random(int size) {
        byte[] b = new byte[size];
        SplittableRandom r = new SplittableRandom(size * 31L + 7);
        for (int i = 0; i < size; i++) {
            b[i] = (byte) r.nextInt();
        }
        return ByteString.copyFrom(b);
    }
}
