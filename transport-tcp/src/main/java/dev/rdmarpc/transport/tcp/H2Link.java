package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2FrameStreamEvent;
import io.netty.handler.codec.http2.Http2FrameStreamException;
import io.netty.handler.codec.http2.Http2Stream;

import java.lang.System.Logger.Level;

/**
 * What both HTTP/2 bridges ({@link H2Bridge} on a server connection, {@link H2ClientBridge} on a client one) do alike
 * between core and Netty's HTTP/2 codec: the bytes core writes are cut into whole rdmarpc frames for the bridge to
 * translate; frames for core are handed on at once, or from a task of their own while core is inside one of its own
 * writes or flushes (core must not hear of frames from inside its own sends); HTTP/2 frames are written with their
 * failures logged; received bytes' credit goes back; and the codec's stream and connection errors become the bridge's
 * calls. Used on the connection's I/O thread only.
 */
final class H2Link {
    /** The bridge's end of a call whose HTTP/2 stream went away. */
    interface StreamEnds {
        /** Ends the call of HTTP/2 stream {@code id}, if the bridge has one, with {@code status}. */
        void streamGone(int id, Status status);
    }

    /** Logs a failed HTTP/2 write: one listener for every write, made once. */
    private static final ChannelFutureListener LOG_FAILURE = f -> {
        if (!f.isSuccess()) {
            TcpFrameConnection.LOG.log(Level.DEBUG, "HTTP/2 write to {0} failed: {1}", f.channel(), f.cause());
        }
    };

    private final TcpFrameConnection connection;
    private final ChannelHandlerContext ctx;
    private final CoreFrameSplitter.Sink translator;
    private final StreamEnds ends;
    /** What a call whose stream closed before the bridge ended it ends with (reset, GOAWAY, connection gone). */
    private final Status closed;
    private final CoreFrameSplitter fromCore;
    /** Core's writes and flushes in progress (frames for core made meanwhile wait for a task of their own). */
    private int inCore;
    private boolean released;

    /**
     * A link whose core frames go to {@code translator}, and whose streams that went away to {@code ends}: with
     * {@code closed} when the stream closed, with INTERNAL when the codec reset it for a stream error.
     */
    H2Link(TcpFrameConnection connection, ChannelHandlerContext ctx, CoreFrameSplitter.Sink translator, StreamEnds ends,
            Status closed) {
        this.connection = connection;
        this.ctx = ctx;
        this.translator = translator;
        this.ends = ends;
        this.closed = closed;
        this.fromCore = new CoreFrameSplitter(ctx.alloc());
    }

    /** Core writes {@code msg}: its bytes go to the bridge frame by frame; anything else passes on. */
    void write(Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf bytes)) {
            ctx.write(msg, promise);
            return;
        }
        promise.trySuccess();
        if (released) {
            bytes.release();
            return;
        }
        inCore++;
        try {
            fromCore.add(bytes, translator);
        } finally {
            inCore--;
        }
    }

    /** Core flushes: what completes meanwhile (DATA reaching the socket) tells core from a later task. */
    void flush() {
        inCore++;
        try {
            ctx.flush();
        } finally {
            inCore--;
        }
    }

    /**
     * Hands one rdmarpc frame, made in a slab buffer core may keep the payload of without a copy, to core (taking the
     * caller's reference): at once, straight to the connection's handler unless received bytes wait before it; from a
     * task of its own while core is inside one of its own calls.
     */
    void toCore(SlabBuffer frame) {
        if (inCore > 0) {
            toCoreLater(frame);
        } else {
            connection.receiveMade(frame);
        }
    }

    /** Hands a frame to core from a task of its own, with the end of a read burst after it. */
    void toCoreLater(SlabBuffer frame) {
        ctx.executor().execute(() -> {
            if (released) {
                frame.release();
                return;
            }
            connection.receiveMade(frame);
            ctx.fireChannelReadComplete();
        });
    }

    /** Ends the read burst of the frames handed to core at once (those handed later end their own). */
    void readComplete() {
        if (inCore == 0) {
            ctx.fireChannelReadComplete();
        }
    }

    /** Writes an HTTP/2 frame; a failure is logged (the channel is closing, or the codec refused the frame). */
    void write(Object frame) {
        ctx.write(frame).addListener(LOG_FAILURE);
    }

    /** Returns {@code bytes} of the peer's flow-control credit on the stream (and the connection). */
    void returnCredit(Http2FrameStream stream, int bytes) {
        if (bytes > 0 && stream.state() != Http2Stream.State.CLOSED) {
            write(new DefaultHttp2WindowUpdateFrame(bytes).stream(stream));
        }
    }

    /** Takes the codec's stream-closed events (true); other events are the caller's to pass on (false). */
    boolean userEvent(Object evt) {
        if (evt instanceof Http2FrameStreamEvent e && e.type() == Http2FrameStreamEvent.Type.State) {
            if (e.stream().state() == Http2Stream.State.CLOSED) {
                ends.streamGone(e.stream().id(), closed);
                return true;
            }
        }
        return false;
    }

    /**
     * Takes the codec's HTTP/2 errors (true): a stream error (the codec reset the stream already) ends its call; a
     * connection error is why the connection closes (the codec sends GOAWAY with the error's code, then closes). Other
     * failures are the caller's to pass on (false).
     */
    boolean exception(Throwable cause) {
        if (cause instanceof Http2FrameStreamException e) {
            ends.streamGone(e.stream().id(), Status.INTERNAL.withDescription("HTTP/2 stream error: " + e.getCause().getMessage()));
            return true;
        }
        if (cause instanceof Http2Exception) {
            connection.closingOnError(new ProtocolException("HTTP/2 protocol error: " + cause.getMessage()));
            return true;
        }
        return false;
    }

    boolean released() {
        return released;
    }

    /** Frees what is held of core's unfinished frame; true the first time (the bridge frees its own then). */
    boolean release() {
        if (released) {
            return false;
        }
        released = true;
        fromCore.release();
        return true;
    }
}
