package dev.rdmarpc.grpc;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** A grpc name resolver for a fixed address list: {@code static:///host:port,host:port,...}. */
final class StaticResolverProvider extends NameResolverProvider {
    static final String SCHEME = "static";

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }

    @Override
    public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
        if (!SCHEME.equals(targetUri.getScheme())) {
            return null;
        }
        String list = targetUri.getPath().startsWith("/") ? targetUri.getPath().substring(1) : targetUri.getPath();
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (String hostPort : list.split(",")) {
            int colon = hostPort.lastIndexOf(':');
            groups.add(new EquivalentAddressGroup(new InetSocketAddress(hostPort.substring(0, colon),
                    Integer.parseInt(hostPort.substring(colon + 1)))));
        }
        return new NameResolver() {
            @Override
            public String getServiceAuthority() {
                return "static";
            }

            @Override
            public void start(Listener2 listener) {
                listener.onResult2(ResolutionResult.newBuilder().setAddressesOrError(io.grpc.StatusOr.fromValue(groups)).build());
            }

            @Override
            public void shutdown() {
            }
        };
    }
}
