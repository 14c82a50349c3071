package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ConnectionUpgrader;

import java.util.List;

/**
 * What one side of every connection it makes or accepts advertises and enforces. Internal: public only for
 * RpcChannel and RpcServer.
 *
 * @param pool             slab pool for frames and messages
 * @param initialWindow    per-stream receive window, in MESSAGE payload bytes
 * @param maxFramePayload  largest frame payload this side accepts
 * @param maxMessageSize   largest message this side accepts
 * @param mode             transport choice after HELLO
 * @param upgraders        upgraders consulted unless mode is TCP
 */
public record ConnectionSettings(SlabPool pool, int initialWindow, int maxFramePayload, int maxMessageSize,
                                 TransportMode mode, List<ConnectionUpgrader> upgraders) {
    public static final int DEFAULT_WINDOW = 2 << 20;
    public static final int DEFAULT_MAX_FRAME_PAYLOAD = 1 << 20;
    public static final int DEFAULT_MAX_MESSAGE_SIZE = 4 << 20;
}
