#The on - trajectory probes' results and report (issue 41, items 3 and 4): the Parquet sidecar, the
#record field, the statistics over probe steps and the report section, all on synthetic rows.
#No LibTorch : the results, stats and render libraries only.
fp8lab_add_test(NAME experiments_probe_sidecar_test SOURCES probe_sidecar_test.cpp LIBS
                    fp8lab_stats fp8lab::parquet LABELS "fast" TIMEOUT 60)
    fp8lab_add_test(NAME experiments_probe_statistics_test SOURCES probe_statistics_test.cpp LIBS
                        fp8lab_stats LABELS "fast" TIMEOUT 60)
fp8lab_add_test(NAME experiments_probe_report_test SOURCES probe_report_test.cpp
                LIBS fp8lab_render LABELS "fast" TIMEOUT 60)
