package dev.rdmarpc.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP forwarder on loopback that a test can pause (the bytes it reads wait, both ways, and the sockets stay open: a
 * server that stops answering), take away (its listening socket and every connection closed: a server gone) and bring
 * back on the same port. Counts the connections it accepted and the bytes it forwarded each way.
 */
final class TcpProxy implements AutoCloseable {
    private final int targetPort;
    private final int port;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicInteger accepted = new AtomicInteger();
    /** Bytes forwarded from clients to the server, and back. */
    final AtomicLong toServer = new AtomicLong();
    final AtomicLong toClient = new AtomicLong();
    private volatile ServerSocket listener;
    private volatile Thread acceptor;
    private boolean paused;

    TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        ServerSocket first = listenBelowTheEphemeralRange();
        this.port = first.getLocalPort();
        accept(first);
    }

    int port() {
        return port;
    }

    int accepted() {
        return accepted.get();
    }

    /** Stops forwarding: what arrives from now on waits (the connections stay open). */
    synchronized void pause() {
        paused = true;
    }

    /** Forwards again, what waited first. */
    synchronized void resume() {
        paused = false;
        notifyAll();
    }

    /** Closes the listening socket and every connection: connecting is refused until {@link #comeBack}. */
    void goAway() throws IOException {
        listener.close();
        // a socket closed while a thread is blocked in its accept() is let go once that thread has left accept():
        // until then its port is still bound, so comeBack() waits for it
        try {
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Socket s : sockets) {
            s.close();
        }
    }

    /** Listens on the same port again. */
    void comeBack() throws IOException {
        accept(listen(port));
    }

    @Override
    public void close() throws IOException {
        resume();
        goAway();
    }

    /**
     * Listens on a free port below the kernel's ephemeral range: while the proxy is away, no socket bound to port 0 and
     * no outgoing connection can take its port (on loopback a client dialling a port nobody listens on can be given
     * that very port as its own and connect to itself), so {@link #comeBack} can listen on it again.
     */
    private static ServerSocket listenBelowTheEphemeralRange() throws IOException {
        int low = 32768; // Linux's default start of the range
        try {
            low = Integer.parseInt(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            // not Linux: keep the default
        }
        IOException last = null;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = 1024 + java.util.concurrent.ThreadLocalRandom.current().nextInt(Math.max(1, low - 1024));
            try {
                return listen(port);
            } catch (IOException e) {
                last = e;
            }
        }
        throw last;
    }

    private static ServerSocket listen(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return s;
    }

    private void accept(ServerSocket s) {
        listener = s;
        acceptor = Thread.ofVirtual().start(() -> {
            while (!s.isClosed()) {
                try {
                    Socket client = s.accept();
                    accepted.incrementAndGet();
                    Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    sockets.add(client);
                    sockets.add(server);
                    Thread.ofVirtual().start(() -> pipe(client, server, toServer));
                    Thread.ofVirtual().start(() -> pipe(server, client, toClient));
                } catch (IOException e) {
                    return; // closed
                }
            }
        });
    }

    private void pipe(Socket from, Socket to, AtomicLong count) {
        byte[] buf = new byte[16 * 1024];
        try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                awaitResumed();
                out.write(buf, 0, n);
                count.addAndGet(n);
            }
        } catch (IOException | InterruptedException e) {
            // one side closed: both are closed on the way out
        } finally {
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    private synchronized void awaitResumed() throws InterruptedException {
        while (paused) {
            wait();
        }
    }
}
