package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Bad bytes written with a raw socket: each must close only that connection, while a proper
 * client on another connection keeps working.
 */
class MalformedFramesTest extends LoopbackTest {

    private static ByteBuffer header(int len, int type, int flags, int stream, int credit) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(len).put((byte) type).put((byte) flags).putShort((short) 0).putInt(stream).putInt(credit);
        return b.flip();
    }

    private static byte[] hello(int version) {
        ByteBuffer p = ByteBuffer.allocate(4 + 2 + 2 + 4 + 4 + 4 + 2).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(Hello.MAGIC).putShort((short) version).putShort((short) 0).putInt(1 << 20).putInt(1 << 20).putInt(4 << 20).putShort((short) 0);
        return frame(FrameType.HELLO, 0, 0, p.array());
    }

    private static byte[] frame(int type, int flags, int stream, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(header(payload.length, type, flags, stream, 0)).put(payload);
        return b.array();
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    /** Writes the bytes (and optionally half-closes) and expects the server to close the connection. */
    private void expectClosed(byte[] bytes, boolean shutdownOutput) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.getPort()), 30_000);
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
            if (shutdownOutput) {
                s.shutdownOutput();
            }
            InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            try {
                while (in.read(buf) >= 0) {
                    // the server may answer HELLO or send GOAWAY first; read until it closes
                }
            } catch (SocketTimeoutException e) {
                fail("server did not close the connection");
            } catch (IOException e) {
                // reset: closed as well
            }
        }
        byte[] ok = Bytes.pattern(33, 1);
        assertArrayEquals(ok, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, ok),
                "the server and other connections carry on");
        Await.until(() -> server.connectionCount() == 1,
                () -> "only the bad connection was closed: " + server.connectionCount() + " connections");
    }

    private void warmUp() {
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[1]);
    }

    @Test
    void unknownFrameType() throws IOException {
        warmUp();
        expectClosed(concat(hello(1), frame(99, 0, 1, new byte[3])), false);
    }

    @Test
    void lengthPastTheMaximum() throws IOException {
        warmUp();
        ByteBuffer h = header(512 << 20, FrameType.MESSAGE, FrameFlags.BEGIN, 1, 0);
        byte[] hb = new byte[FrameHeader.SIZE];
        h.get(hb);
        expectClosed(concat(hello(1), hb), false);
    }

    @Test
    void truncatedHeader() throws IOException {
        warmUp();
        expectClosed(concat(hello(1), new byte[]{1, 2, 3, 4, 5}), true);
    }

    @Test
    void payloadForAnUnknownStream() throws IOException {
        warmUp();
        byte[] msg = frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END, 41, new byte[]{0, 0, 0, 0});
        expectClosed(concat(hello(1), msg), false);
    }

    @Test
    void helloWithAnUnsupportedVersion() throws IOException {
        warmUp();
        expectClosed(hello(7), false);
    }

    @Test
    void firstFrameNotHello() throws IOException {
        warmUp();
        expectClosed(frame(FrameType.PING, 0, 0, new byte[8]), false);
    }

    @Test
    void http2ClientPrefaceWithoutSettings() throws IOException {
        warmUp();
        // HTTP/2 clients are served, but one whose first frame after the preface is not SETTINGS is closed (a PING here)
        byte[] preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] ping = {0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
        expectClosed(concat(preface, ping), false);
    }

    @Test
    void http2ClientThatSendsOnlyThePrefaceAndHalfClosesIsClosed() throws IOException {
        warmUp();
        expectClosed("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII), true);
    }

    @Test
    void garbageInsideHeaders() throws IOException {
        warmUp();
        byte[] junk = new byte[40];
        java.util.Arrays.fill(junk, (byte) 0x7f);
        expectClosed(concat(hello(1), frame(FrameType.HEADERS, 0, 1, junk)), false);
        assertTrue(true);
    }
}
