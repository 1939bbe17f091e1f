{
  "targets": [
    {
      "target_name": "netns",
      "sources": [
        "native/addon.cc",
        "native/capabilities.cc",
        "native/fd_watch.cc",
        "native/file_lock.cc",
        "native/io_jobs.cc",
        "native/io_pool.cc",
        "native/js_error.cc",
        "native/lifecycle_jobs.cc",
        "native/netlink.cc",
        "native/netlink_off_thread.cc",
        "native/netlink_watch.cc",
        "native/nsfd.cc",
        "native/packet_capture.cc",
        "native/packet_ring.cc",
        "native/recv_fd.cc",
        "native/run_dir_entry.cc",
        "native/run_dir_watch.cc",
        "native/run_program.cc",
        "native/spawn_child.cc",
        "native/thread_home.cc",
        "native/thread_switch.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "cflags_cc!": [
        "-fno-exceptions"
      ],
      "defines": [
        "NAPI_CPP_EXCEPTIONS",
        "NAPI_VERSION=8",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "_GNU_SOURCE"
      ],
      "cflags_cc": [
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-fvisibility=hidden",
        "-fstack-protector-strong"
      ]
    },
    {
      "target_name": "netns-exec",
      "type": "executable",
      "sources": [
        "native/exec_helper.c",
        "native/helper_status.c"
      ],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-fstack-protector-strong"
      ],
      "ldflags": [
        "-static"
      ],
      "defines": [
        "_GNU_SOURCE"
      ]
    },
    {
      "target_name": "netns-cni-shim",
      "type": "executable",
      "sources": [
        "native/cni_shim.c"
      ],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-fstack-protector-strong"
      ],
      "ldflags": [
        "-static"
      ],
      "defines": [
        "_GNU_SOURCE"
      ]
    },
    {
      "target_name": "netns-sandbox",
      "type": "executable",
      "sources": [
        "native/sandbox_helper.c",
        "native/sandbox_init.c",
        "native/helper_status.c"
      ],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-fstack-protector-strong"
      ],
      "ldflags": [
        "-static"
      ],
      "defines": [
        "_GNU_SOURCE"
      ]
    }
  ]
}
