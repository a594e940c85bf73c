# Issue 13 item 1 (peer versions): the recipe field torchao_version (torchao-0.18 / torchao-main)
# that the torchao MX scale modes follow; run ids unchanged for every recipe it does not affect.
fp8lab_add_test(NAME recipes_peer_versions_test SOURCES peer_versions_test.cpp
                LIBS fp8lab::recipes LABELS fast READS_SOURCE)
