package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The Java class name of every message of a set of files, by fully-qualified proto name. */
final class MessageTypes {
    private final Map<String, String> javaNames = new HashMap<>();

    /** Indexes the messages, nested ones included, of these files (a request's files and their imports). */
    MessageTypes(List<FileDescriptorProto> files) {
        for (FileDescriptorProto file : files) {
            String protoPackage = file.getPackage();
            for (DescriptorProto message : file.getMessageTypeList()) {
                add(message, protoPackage, JavaNames.typePrefix(file, message));
            }
        }
    }

    private void add(DescriptorProto message, String protoScope, String javaScope) {
        String protoName = JavaNames.join(protoScope, message.getName());
        String javaName = JavaNames.join(javaScope, message.getName());
        javaNames.put("." + protoName, javaName);
        for (DescriptorProto nested : message.getNestedTypeList()) {
            add(nested, protoName, javaName);
        }
    }

    /**
     * The Java name, for use in source ({@code com.example.Outer.Inner}), of the message with this
     * fully-qualified proto name ({@code .example.Outer.Inner}).
     *
     * @throws CodeGenerationException if no file of the request defines it
     */
    String javaName(String protoTypeName) {
        String name = javaNames.get(protoTypeName);
        if (name == null) {
            throw new CodeGenerationException("message type " + protoTypeName + " is not defined in any file protoc passed");
        }
        return name;
    }
}
