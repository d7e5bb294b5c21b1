package k6grpc

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	reflection "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// compile compiles .proto files, looking for them and their imports in
// importPaths (relative ones from the script's folder; none: the script's
// folder itself); the well-known types are built in.
func compile(h Host, importPaths []string, files []string) ([]protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		ImportPaths: importPaths,
		Accessor: func(path string) (io.ReadCloser, error) {
			b, err := h.ReadFile(path)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(bytes.NewReader(b)), nil
		},
	})}
	out, err := c.Compile(context.Background(), files...)
	if err != nil {
		return nil, err
	}
	fds := make([]protoreflect.FileDescriptor, len(out))
	for i, f := range out {
		fds[i] = f
	}
	return fds, nil
}

// protoset reads a protoset: a serialized FileDescriptorSet, as
// protoc --descriptor_set_out writes one (with --include_imports).
func protoset(b []byte) ([]protoreflect.FileDescriptor, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a protoset (a FileDescriptorSet): %v", err)
	}
	return filesOf(&set)
}

// filesOf links a FileDescriptorSet's files.
func filesOf(set *descriptorpb.FileDescriptorSet) ([]protoreflect.FileDescriptor, error) {
	reg, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, err
	}
	var fds []protoreflect.FileDescriptor
	reg.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		fds = append(fds, f)
		return true
	})
	return fds, nil
}

// reflect asks the server's reflection service for the files of every
// service it lists, with their imports.
func reflect(ctx context.Context, conn *grpc.ClientConn) ([]protoreflect.FileDescriptor, error) {
	stream, err := reflection.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	ask := func(req *reflection.ServerReflectionRequest) (*reflection.ServerReflectionResponse, error) {
		if err := stream.Send(req); err != nil {
			return nil, err
		}
		res, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		if e := res.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("reflection: %s", e.GetErrorMessage())
		}
		return res, nil
	}
	res, err := ask(&reflection.ServerReflectionRequest{MessageRequest: &reflection.ServerReflectionRequest_ListServices{}})
	if err != nil {
		return nil, err
	}
	have := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	add := func(res *reflection.ServerReflectionResponse) error {
		for _, b := range res.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("reflection: %v", err)
			}
			if _, ok := have[fd.GetName()]; !ok {
				have[fd.GetName()] = fd
				order = append(order, fd.GetName())
			}
		}
		return nil
	}
	for _, s := range res.GetListServicesResponse().GetService() {
		r, err := ask(&reflection.ServerReflectionRequest{MessageRequest: &reflection.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s.GetName()}})
		if err != nil {
			return nil, err
		}
		if err := add(r); err != nil {
			return nil, err
		}
	}
	// Imports the server did not send with the files that need them.
	for i := 0; i < len(order); i++ {
		for _, dep := range have[order[i]].GetDependency() {
			if _, ok := have[dep]; ok {
				continue
			}
			if _, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil {
				have[dep] = protodesc.ToFileDescriptorProto(mustFile(dep))
				order = append(order, dep)
				continue
			}
			r, err := ask(&reflection.ServerReflectionRequest{MessageRequest: &reflection.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, err
			}
			if err := add(r); err != nil {
				return nil, err
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, n := range order {
		set.File = append(set.File, have[n])
	}
	return filesOf(set)
}

func mustFile(path string) protoreflect.FileDescriptor {
	f, _ := protoregistry.GlobalFiles.FindFileByPath(path)
	return f
}
