"""takt msggen: ROS .msg/.srv parsing and code generation (C structs, ROS 1 and CDR encodings,
type support descriptors, C++ wrappers)."""
