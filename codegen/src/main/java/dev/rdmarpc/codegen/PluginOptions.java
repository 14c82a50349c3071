package dev.rdmarpc.codegen;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The plugin's parameter (protoc's {@code --rdmarpc_out=<parameter>:dir}, the Maven plugin's {@code <options>}):
 * comma-separated {@code attachments=<selector>} entries choosing the rpcs that get {@code ...WithAttachment}
 * methods. A selector is {@code *} (every rpc), a {@code .proto} file name as protoc names it
 * ({@code blocks/blocks.proto}), a full service name ({@code demo.blocks.BlockStore}) or a full rpc name
 * ({@code demo.blocks.BlockStore/Read}). Without the parameter no rpc gets them, as in grpc-java.
 */
final class PluginOptions {
    private static final String ATTACHMENTS = "attachments=";

    private final Set<String> selectors = new LinkedHashSet<>();
    private final Set<String> matched = new LinkedHashSet<>();

    /** Parses the parameter; an unknown entry or an empty selector is a {@link CodeGenerationException}. */
    PluginOptions(String parameter) {
        if (parameter.isBlank()) {
            return;
        }
        for (String raw : parameter.split(",", -1)) {
            String entry = raw.strip();
            if (!entry.startsWith(ATTACHMENTS) || entry.substring(ATTACHMENTS.length()).isBlank()) {
                throw new CodeGenerationException("unknown rdmarpc codegen option '" + entry + "' in '" + parameter
                        + "': the plugin takes only attachments=<* | file.proto | package.Service | package.Service/Rpc>,"
                        + " separated by commas");
            }
            selectors.add(entry.substring(ATTACHMENTS.length()).strip());
        }
    }

    /** Whether the rpc {@code rpc} of the service with full name {@code service}, in file {@code file}, gets attachment methods. */
    boolean attachments(String file, String service, String rpc) {
        boolean any = false;
        for (String s : List.of("*", file, service, service + "/" + rpc)) {
            if (selectors.contains(s)) {
                matched.add(s);
                any = true;
            }
        }
        return any;
    }

    /**
     * Fails when a selector matched no rpc of the files generated: a misspelled name would otherwise silently give
     * a service without the methods its code calls.
     */
    void requireAllMatched() {
        List<String> unmatched = new ArrayList<>(selectors);
        unmatched.removeAll(matched);
        unmatched.remove("*");
        if (!unmatched.isEmpty()) {
            throw new CodeGenerationException("rdmarpc codegen option attachments=" + String.join(", attachments=", unmatched)
                    + " matches no file, service or rpc protoc asked to generate");
        }
    }
}
