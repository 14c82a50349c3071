package dev.rdmarpc.samples.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.grpc.RdmaChannelBuilder;
import dev.rdmarpc.samples.grpc.greeter.GreeterGrpc;
import dev.rdmarpc.samples.grpc.greeter.HelloReply;
import dev.rdmarpc.samples.grpc.greeter.HelloRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Iterator;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Calls the Greeter with grpc-java's generated blocking stub over rdmarpc. The only change from a
 * grpc-netty client is the builder: {@code RdmaChannelBuilder.forAddress(host, port)} for
 * {@code NettyChannelBuilder.forAddress(host, port)}.
 */
@Command(name = "greeter-client", mixinStandardHelpOptions = true, version = "rdmarpc grpc sample 0.1",
        description = "Calls grpc-java's Greeter over rdmarpc and prints the replies.")
public final class GreeterClient implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Server host (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = {"-p", "--port"}, defaultValue = "50052", description = "Server port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    @Option(names = "--name", defaultValue = "world", description = "Who to greet (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--times", defaultValue = "3", description = "Greetings to stream back (default: ${DEFAULT-VALUE}).")
    int times;

    @Override
    public Integer call() throws Exception {
        ManagedChannel channel = RdmaChannelBuilder.forAddress(host, port).transportMode(transport).build();
        try {
            GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
            HelloReply reply = stub.sayHello(HelloRequest.newBuilder().setName(name).build());
            System.out.println(reply.getMessage());
            Iterator<HelloReply> replies = stub.sayHelloAgain(HelloRequest.newBuilder().setName(name).setTimes(times).build());
            while (replies.hasNext()) {
                System.out.println(replies.next().getMessage());
            }
            return 0;
        } catch (StatusRuntimeException e) {
            System.err.println("greeter-client: call failed: " + e.getStatus());
            return 1;
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GreeterClient()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }
}
