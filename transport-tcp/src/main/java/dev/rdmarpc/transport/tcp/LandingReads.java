package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * A connection's receive-buffer allocator: the channel's own, except that while its {@link FrameDecoder} receives a
 * large frame into a slab buffer, each read goes straight into the rest of that buffer (no read buffer, no copy).
 * Only for channels that read synchronously into the buffer they are given (epoll, NIO) and pass the bytes on as they
 * came (no TLS, no HTTP/2 translation in between).
 */
final class LandingReads implements RecvByteBufAllocator {
    private final RecvByteBufAllocator delegate;
    private final FrameDecoder decoder;

    LandingReads(RecvByteBufAllocator delegate, FrameDecoder decoder) {
        this.delegate = delegate;
        this.decoder = decoder;
    }

    @Override
    public Handle newHandle() {
        return new LandingHandle((ExtendedHandle) delegate.newHandle());
    }

    /** The channel's handle, with reads into the landing frame's buffer while there is one. */
    private final class LandingHandle extends DelegatingHandle implements ExtendedHandle {
        LandingHandle(ExtendedHandle delegate) {
            super(delegate);
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf into = decoder.readTarget();
            return into != null ? into : delegate().allocate(alloc);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
        }
    }
}
