package dev.rdmarpc.transport.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;

/** A plain blocking socket for writing arbitrary bytes at a server and watching it close the connection. */
final class RawClient implements AutoCloseable {
    final Socket socket;

    RawClient(InetSocketAddress server) throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(server, 5_000);
    }

    RawClient write(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return this;
    }

    /** Reads (and drops) until the server closes; true if it did within the timeout. */
    boolean awaitServerClose(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        InputStream in = socket.getInputStream();
        byte[] sink = new byte[8192];
        try {
            while (in.read(sink) >= 0) {
                // drain
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
