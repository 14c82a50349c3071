package dev.rdmarpc.grpc;

import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy between an rdmarpc client and server on 127.0.0.1 that reads the frames passing
 * through (docs/PROTOCOL.md: 16-byte header, little-endian length) to count PINGs and their ACKs
 * (each way) and messages sent with and without the COMPRESSED flag, and that can make the server look dead: {@link #freeze()} stops forwarding in both directions on
 * the connections open at that moment while keeping their sockets open. Connections accepted later
 * are forwarded normally. Both peers must stay on TCP.
 */
final class FrameProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    /** PINGs the client sent (not ACKs), forwarded or not. */
    final AtomicInteger pings = new AtomicInteger();
    /** PING ACKs the server sent, forwarded or not. */
    final AtomicInteger pingAcks = new AtomicInteger();
    /** PINGs the server sent (its keepalive), forwarded or not. */
    final AtomicInteger serverPings = new AtomicInteger();
    /** PING ACKs the client sent, forwarded or not. */
    final AtomicInteger clientPingAcks = new AtomicInteger();
    /** Messages (MESSAGE frames with BEGIN) each way, and those flagged COMPRESSED. */
    final AtomicInteger messagesToServer = new AtomicInteger();
    final AtomicInteger compressedToServer = new AtomicInteger();
    final AtomicInteger messagesToClient = new AtomicInteger();
    final AtomicInteger compressedToClient = new AtomicInteger();
    private volatile boolean closed;

    FrameProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("frame-proxy-accept").start(this::acceptLoop);
    }

    int port() {
        return listener.getLocalPort();
    }

    /** The connections open now stop forwarding anything, without closing. */
    void freeze() {
        for (Link l : links) {
            l.frozen = true;
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            try {
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
                Link link = new Link(client, server);
                links.add(link);
                connections.incrementAndGet();
                Thread.ofVirtual().name("frame-proxy-c2s").start(() -> link.pump(client, server, true));
                Thread.ofVirtual().name("frame-proxy-s2c").start(() -> link.pump(server, client, false));
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        for (Link l : links) {
            l.close();
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private final class Link {
        final Socket client;
        final Socket server;
        volatile boolean frozen;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void pump(Socket from, Socket to, boolean fromClient) {
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                byte[] header = new byte[FrameHeader.SIZE];
                while (true) {
                    if (in.readNBytes(header, 0, header.length) < header.length) {
                        break;
                    }
                    ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                    int length = h.getInt(FrameHeader.LENGTH_OFFSET);
                    int type = header[FrameHeader.TYPE_OFFSET];
                    int flags = header[FrameHeader.FLAGS_OFFSET];
                    byte[] payload = in.readNBytes(length);
                    if (payload.length < length) {
                        break;
                    }
                    if (type == FrameType.MESSAGE && (flags & FrameFlags.BEGIN) != 0) {
                        (fromClient ? messagesToServer : messagesToClient).incrementAndGet();
                        if ((flags & FrameFlags.COMPRESSED) != 0) {
                            (fromClient ? compressedToServer : compressedToClient).incrementAndGet();
                        }
                    }
                    if (type == FrameType.PING) {
                        boolean ack = (flags & FrameFlags.ACK) != 0;
                        if (fromClient) {
                            (ack ? clientPingAcks : pings).incrementAndGet();
                        } else {
                            (ack ? pingAcks : serverPings).incrementAndGet();
                        }
                    }
                    if (frozen) {
                        continue;
                    }
                    out.write(header);
                    out.write(payload);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed
            }
            if (!frozen) {
                close();
            }
        }

        void close() {
            closeQuietly(client);
            closeQuietly(server);
        }
    }
}
