package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.BenchServer;
import dev.rdmarpc.bench.driver.Drivers;
import dev.rdmarpc.bench.driver.ServerSettings;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A benchmark server process: listens on a control port for one benchmark client at a time and
 * starts, on its command, the server of one transport at a time, and reports its own CPU time.
 */
final class BenchServerHost implements AutoCloseable {
    private final String bindHost;
    private final int controlPort;
    private final int dataPort;
    private final int maxMessage;
    private final PrintStream log;
    private final AtomicBoolean sessionActive = new AtomicBoolean();
    private ServerSocket control;
    private BenchServer running;
    private Transport runningTransport;
    private volatile boolean closed;

    BenchServerHost(String bindHost, int controlPort, int dataPort, int maxMessage, PrintStream log) {
        this.bindHost = bindHost;
        this.controlPort = controlPort;
        this.dataPort = dataPort;
        this.maxMessage = maxMessage;
        this.log = log;
    }

    /** Binds the control port. */
    void start() throws IOException {
        control = new ServerSocket();
        control.setReuseAddress(true);
        control.bind(new InetSocketAddress(bindHost, controlPort));
    }

    /** The control port bound. */
    int controlPort() {
        return control.getLocalPort();
    }

    /** Serves benchmark clients until closed. */
    void serve() {
        while (!closed) {
            Socket s;
            try {
                s = control.accept();
            } catch (IOException e) {
                if (!closed) {
                    log.println("control port failed: " + e.getMessage());
                }
                return;
            }
            if (!sessionActive.compareAndSet(false, true)) {
                reject(s);
                continue;
            }
            Thread t = new Thread(() -> session(s), "bench-control-session");
            t.setDaemon(true);
            t.start();
        }
    }

    private static void reject(Socket s) {
        try (s; PrintWriter w = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8), true)) {
            w.println("ERR busy: another benchmark client is using this server");
        } catch (IOException ignored) {
            // it went away
        }
    }

    private void session(Socket s) {
        String peer = String.valueOf(s.getRemoteSocketAddress());
        log.println("benchmark client connected from " + peer);
        try (s;
             BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8), true)) {
            s.setTcpNoDelay(true);
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split("\\s+");
                if (w[0].equals("QUIT")) {
                    break;
                }
                out.println(handle(w));
            }
        } catch (IOException e) {
            log.println("control connection from " + peer + " failed: " + e.getMessage());
        } finally {
            stopRunning();
            sessionActive.set(false);
            log.println("benchmark client " + peer + " left");
        }
    }

    private String handle(String[] w) {
        try {
            return switch (w[0]) {
                case "HELLO" -> "OK version=" + ControlProtocol.VERSION + " pid=" + ProcessHandle.current().pid()
                        + " cpus=" + Runtime.getRuntime().availableProcessors() + " maxMessage=" + maxMessage
                        + " java=" + System.getProperty("java.version");
                case "START" -> start(w);
                case "STOP" -> {
                    stopRunning();
                    yield "OK";
                }
                case "CPU" -> "OK cpu_ns=" + ProcessCpu.nanos();
                default -> "ERR unknown command '" + ControlProtocol.oneLine(w[0]) + "'";
            };
        } catch (RuntimeException e) {
            return "ERR " + ControlProtocol.oneLine(String.valueOf(e));
        }
    }

    private String start(String[] w) {
        if (w.length != 3 && !(w.length == 4 && w[3].equals("tls"))) {
            return "ERR usage: START <transport> <direct|default> [tls]";
        }
        Transport t;
        try {
            t = Transport.parse(w[1]);
        } catch (IllegalArgumentException e) {
            return "ERR " + ControlProtocol.oneLine(e.getMessage());
        }
        stopRunning();
        try {
            BenchServer server = Drivers.startServer(t, new ServerSettings(bindHost, dataPort, maxMessage, w[2].equals("direct"),
                    w.length == 4));
            synchronized (this) {
                running = server;
                runningTransport = t;
            }
            log.println("started the " + t + " server on port " + server.port() + (w.length == 4 ? " (TLS)" : ""));
            return "OK port=" + server.port();
        } catch (BenchException e) {
            return "ERR " + ControlProtocol.oneLine(e.getMessage());
        } catch (Exception | LinkageError e) {
            return "ERR " + t + ": the server could not start: " + ControlProtocol.oneLine(String.valueOf(e));
        }
    }

    private void stopRunning() {
        BenchServer s;
        Transport t;
        synchronized (this) {
            s = running;
            t = runningTransport;
            running = null;
            runningTransport = null;
        }
        if (s != null) {
            s.close();
            log.println("stopped the " + t + " server");
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            if (control != null) {
                control.close();
            }
        } catch (IOException ignored) {
            // closing anyway
        }
        stopRunning();
    }
}
