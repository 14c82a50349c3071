package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ProtocolSwitchException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

import java.net.InetSocketAddress;

/**
 * What one client connection speaks: rdmarpc's protocol or gRPC over HTTP/2 (chosen before the dial in cleartext, by
 * the server's ALPN pick under TLS), and, in {@code AUTO} over cleartext, the check of the server's first bytes that
 * finds an HTTP/2 server answering rdmarpc's HELLO. Used on the connection's I/O thread only.
 */
final class ClientProtocol {
    /** An HTTP/2 frame header: 3-byte length, type, flags, 4-byte stream id. */
    private static final int H2_FRAME_HEADER = 9;
    private static final int SETTINGS = 0x4;

    private final WireProtocol choice;
    private final Http2Servers servers;
    private final InetSocketAddress address;
    private final SlabPool pool;
    /** Cleartext: whether the connection starts with HTTP/2 (prior knowledge). */
    private final boolean h2FromStart;
    /** The server's first bytes, while they are checked (AUTO over cleartext); null once decided. */
    private byte[] first;
    private int firstRead;

    ClientProtocol(WireProtocol choice, Http2Servers servers, InetSocketAddress address, SlabPool pool, boolean tls) {
        this.choice = choice;
        this.servers = servers;
        this.address = address;
        this.pool = pool;
        this.h2FromStart = !tls && (choice == WireProtocol.GRPC || choice == WireProtocol.AUTO && servers.isHttp2(address));
        this.first = !tls && choice == WireProtocol.AUTO && !h2FromStart ? new byte[H2_FRAME_HEADER] : null;
    }

    /** The pool the connection's buffers come from. */
    SlabPool pool() {
        return pool;
    }

    /** Cleartext: whether the connection speaks gRPC over HTTP/2 from its start. */
    boolean h2FromStart() {
        return h2FromStart;
    }

    /** TLS: whether the protocol the server agreed to by ALPN is one this connection may speak; which is {@link #isH2}. */
    boolean accepts(String alpn) {
        return TlsConfig.ALPN_PROTOCOL.equals(alpn) && choice != WireProtocol.GRPC
                || TlsContexts.ALPN_H2.equals(alpn) && choice != WireProtocol.RDMARPC;
    }

    static boolean isH2(String alpn) {
        return TlsContexts.ALPN_H2.equals(alpn);
    }

    /** What the connection must agree to by ALPN, for a refusal. */
    String expectedAlpn() {
        return switch (choice) {
            case AUTO -> TlsConfig.ALPN_PROTOCOL + " or " + TlsContexts.ALPN_H2;
            case RDMARPC -> TlsConfig.ALPN_PROTOCOL;
            case GRPC -> TlsContexts.ALPN_H2;
        };
    }

    /** Puts Netty's HTTP/2 codec and an {@link H2ClientBridge} in front of the handler at {@code ctx}. */
    void addH2(ChannelHandlerContext ctx, TcpFrameConnection c, boolean tls) {
        c.servesHttp2();
        ctx.pipeline().addBefore(ctx.name(), H2ClientBridge.CODEC_NAME, H2Codecs.client());
        ctx.pipeline().addBefore(ctx.name(), H2ClientBridge.NAME, new H2ClientBridge(c, pool, tls));
    }

    /**
     * Looks at the server's first bytes as they arrive (AUTO over cleartext): when they are an HTTP/2 SETTINGS frame,
     * remembers the address and returns why the connection must be dialled again with HTTP/2; null otherwise (also
     * while fewer than an HTTP/2 frame header have arrived: rdmarpc's decoder needs more than that to judge anyway).
     */
    ProtocolSwitchException check(ByteBuf in) {
        if (first == null) {
            return null;
        }
        int n = Math.min(first.length - firstRead, in.readableBytes());
        in.getBytes(in.readerIndex(), first, firstRead, n);
        firstRead += n;
        if (firstRead < first.length) {
            return null;
        }
        byte[] b = first;
        first = null;
        boolean settings = b[0] == 0 && b[3] == SETTINGS && b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0 && b[8] == 0;
        if (!settings) {
            return null;
        }
        servers.remember(address);
        return new ProtocolSwitchException("the server answered rdmarpc's HELLO with an HTTP/2 SETTINGS frame: it speaks gRPC"
                + " over HTTP/2, and is dialled again with that");
    }
}
