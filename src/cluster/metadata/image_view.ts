// The cluster view a broker answers from once it follows the metadata quorum: the latest
// metadata image, read through the ClusterView interface the handlers and the reconciler
// already use. Live brokers are the registered, unfenced ones, each reached at its endpoint of
// the listener clients use. Main thread; update() swaps in the next committed image at once, so
// every read sees one image.
import type { ReplicaBrokerInfo } from '../../coordinator/replication/types.js';
import type { BrokerEndpoint, BrokerState, ClusterView, PartitionRecord, TopicImage } from '../cluster_view.js';
import { configKey, NO_CONFIGS, type BrokerRegistration, type MetadataImage } from './image.js';
import { ConfigResource } from './records.js';

export class ImageClusterView implements ClusterView {
  private current: MetadataImage;
  private live: readonly BrokerEndpoint[];
  private registered: readonly ReplicaBrokerInfo[];
  private controller = -1;
  /** Views of the same image for the node's other client listeners (forListener). */
  private readonly listenerViews = new Map<string, ImageClusterView>();

  constructor(
    readonly clusterId: string,
    readonly localId: number,
    /** The listener whose endpoint clients are given (a broker without it is left out). */
    private readonly listenerName: string,
    image: MetadataImage,
  ) {
    this.current = image;
    this.live = this.liveBrokers(image);
    this.registered = this.registeredBrokers(image);
  }

  get image(): MetadataImage {
    return this.current;
  }

  update(image: MetadataImage): void {
    if (image.brokers !== this.current.brokers) {
      this.live = this.liveBrokers(image);
      this.registered = this.registeredBrokers(image);
    }
    this.current = image;
    for (const v of this.listenerViews.values()) v.update(image);
  }

  /** The active controller as the quorum last reported it, -1 when none is known. */
  setControllerId(id: number): void {
    this.controller = id;
    for (const v of this.listenerViews.values()) v.setControllerId(id);
  }

  /**
   * The same image as another client listener sees it: brokers named by their endpoints on
   * `listenerName` (Kafka answers each listener's clients with that listener's addresses). Kept
   * up to date with this view; one per name (the names come from the configuration).
   */
  forListener(listenerName: string): ImageClusterView {
    if (listenerName === this.listenerName) return this;
    let v = this.listenerViews.get(listenerName);
    if (v === undefined) {
      v = new ImageClusterView(this.clusterId, this.localId, listenerName, this.current);
      v.setControllerId(this.controller);
      this.listenerViews.set(listenerName, v);
    }
    return v;
  }

  /** The image's end offset: it grows with every committed batch. */
  get revision(): number {
    return this.current.provenance.endOffset;
  }

  brokers(): readonly BrokerEndpoint[] {
    return this.live;
  }

  replicaBrokers(): readonly ReplicaBrokerInfo[] {
    return this.registered;
  }

  brokerStates(): readonly BrokerState[] {
    return [...this.current.brokers.values()].sort((a, b) => a.id - b.id).map((b) => {
      const e = b.endpoints.find((x) => x.name === this.listenerName);
      return {
        id: b.id, host: e?.host ?? null, port: e?.port ?? -1, rack: b.rack,
        fenced: b.fenced, warming: b.warming, adminAddress: b.adminAddress,
      };
    });
  }

  controllerId(): number {
    return this.controller;
  }

  topics(): Iterable<TopicImage> {
    return this.current.topicsByName.values();
  }

  topic(name: string): TopicImage | undefined {
    return this.current.topicsByName.get(name);
  }

  topicById(id: string): TopicImage | undefined {
    return this.current.topicsById.get(id);
  }

  partition(topic: string, partition: number): PartitionRecord | undefined {
    const t = this.current.topicsByName.get(topic);
    return t?.table.record(t.id, partition);
  }

  brokerConfigs(resourceName: string): Readonly<Record<string, string>> {
    return this.current.configs.get(configKey(ConfigResource.BROKER, resourceName)) ?? NO_CONFIGS;
  }

  private liveBrokers(image: MetadataImage): BrokerEndpoint[] {
    const out: BrokerEndpoint[] = [];
    for (const b of image.brokers.values()) {
      const e = this.endpointOf(b);
      if (e !== undefined) out.push(e);
    }
    return out.sort((a, b) => a.id - b.id);
  }

  private registeredBrokers(image: MetadataImage): ReplicaBrokerInfo[] {
    return [...image.brokers.values()].map((b) => {
      const e = this.endpointOf(b);
      return { id: b.id, epoch: b.epoch, isrEligible: !b.fenced && !b.inControlledShutdown, endpoint: e === undefined ? null : { host: e.host, port: e.port } };
    });
  }

  private endpointOf(b: BrokerRegistration): BrokerEndpoint | undefined {
    if (b.fenced) return undefined;
    const e = b.endpoints.find((x) => x.name === this.listenerName);
    return e === undefined ? undefined : { id: b.id, host: e.host, port: e.port, rack: b.rack };
  }
}
